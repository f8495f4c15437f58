/* statusline.h — the `statusLine` setting as Claude Code has it: a command
 * whose first stdout line replaces the REPL's built-in footer
 * (docs/repl.md). It gets Claude Code's JSON on stdin (session_id,
 * transcript_path, cwd, model {id, display_name}, workspace {current_dir,
 * project_dir}, version, output_style {name}, cost {total_cost_usd, …},
 * context_window {…}); it has STATUSLINE_TIMEOUT_MS to answer, and a
 * failure (no start, a timeout, a non-zero exit, no output) gives NULL so
 * the caller shows the built-in footer.
 *
 * The setting comes from loom_agent_status_line_json, which an untrusted
 * workspace's settings never reach. No state; any thread (the REPL calls it
 * on the main thread, between runs). */
#ifndef LOOM_CLI_STATUSLINE_H
#define LOOM_CLI_STATUSLINE_H

#include <stdbool.h>

#define STATUSLINE_TIMEOUT_MS 2000

typedef struct statusline_info {
    const char *session_id, *transcript_path, *cwd, *project_dir;
    const char *model, *version, *output_style;
    double cost_usd;              /* < 0: unknown (sent as null) */
    long long context_tokens;     /* < 0: unknown */
    long long context_window;     /* <= 0: unknown */
} statusline_info;

/* The JSON the command reads (caller frees). */
char *statusline_input_json(const statusline_info *info);

/* The command of a status_line setting (JSON text): its "command" when
 * "type" is "command" (or absent) and the command is a non-empty string;
 * else NULL. *padding gets "padding" (0 when absent or not a small whole
 * number). Caller frees. */
char *statusline_command(const char *setting_json, int *padding);

/* Runs `sh -c command` in cwd with input on stdin; its first stdout line,
 * made fit for one terminal line (see statusline_clean), or NULL on any
 * failure. Caller frees. */
char *statusline_run(const char *command, const char *cwd, const char *input, int cols,
                     bool color, int padding);

/* Text from the command made safe for one line of at most cols columns:
 * its colours (SGR, ESC [ … m) kept when color, else dropped; every other
 * control character and escape dropped; cut at the first newline and to
 * the width (colour reset after a cut). Caller frees. */
char *statusline_clean(const char *text, int cols, bool color, int padding);

#endif
