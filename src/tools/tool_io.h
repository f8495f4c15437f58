/* tool_io.h — the port through which Read, Write, Edit and Bash reach the
 * driver's files and terminal instead of Loom's own (loom.h's loom_io_port,
 * adapted by api/io_port.c).
 *
 * A tool asks the port only after the pipeline allowed the call; every
 * check that reads a file (read-before-write, the stale-file check) then
 * works on the texts the port returned (file_state_note_text,
 * file_state_check_text). Each callback may be NULL: that access stays
 * local. Called on the tool's thread; the callee may block (it waits for
 * the driver), and run_command watches cmd->cancel itself.
 */
#ifndef LOOM_TOOLS_TOOL_IO_H
#define LOOM_TOOLS_TOOL_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "base/cancel.h"
#include "base/str.h"

typedef struct tool_io_command {
    const char *command;       /* `bash -c` text */
    const char *cwd;
    long timeout_ms;           /* > 0 */
    const char *call_id;       /* may be NULL */
    size_t output_limit;
    const loom_cancel *cancel; /* the run's; may be NULL */
} tool_io_command;

typedef struct tool_io_outcome {
    loom_str output;
    bool truncated;
    int exit_code;             /* -1: none (ended by a signal, or unknown) */
    char signal[32];           /* "" when none */
    bool timed_out, cancelled;
} tool_io_outcome;

typedef struct tool_io {
    void *ctx;
    /* 0 with the whole text in *text; else -1 and why says what failed. */
    int (*read_text)(void *ctx, const char *path, loom_str *text, loom_str *why);
    int (*write_text)(void *ctx, const char *path, const char *data, size_t len, loom_str *why);
    /* 0 with out filled (out->output initialised by the caller); -1 with
     * why when the command could not be run. */
    int (*run_command)(void *ctx, const tool_io_command *cmd, tool_io_outcome *out,
                       loom_str *why);
} tool_io;

/* Whether ctx's port handles files (both reads and writes: one without
 * the other would check a text against a file it was never read from). */
#define TOOL_IO_FILES(io) ((io) && (io)->read_text && (io)->write_text)

#endif
