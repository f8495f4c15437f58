/* io_port.c — the adapter between loom_io_port (loom.h: malloc'd strings,
 * error strings) and the tools' tool_io (loom_str in and out). Called on
 * the tool's thread; holds no state but the borrowed port. */
#include "api/io_port.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The driver's message, or a default naming the step; frees err. */
static void take_error(loom_str *why, char *err, const char *what)
{
    str_clear(why);
    str_puts(why, err && *err ? err : what);
    free(err);
}

static int read_text(void *ctx, const char *path, loom_str *text, loom_str *why)
{
    const loom_io_port *port = ((api_io *)ctx)->port;
    char *err = NULL;
    size_t len = 0;
    char *got = port->read_text(port->ctx, path, &len, &err);
    if (!got) {
        take_error(why, err, "the client did not give the file's text");
        return -1;
    }
    free(err);
    str_append(text, got, len);
    free(got);
    return 0;
}

static int write_text(void *ctx, const char *path, const char *data, size_t len, loom_str *why)
{
    const loom_io_port *port = ((api_io *)ctx)->port;
    char *err = NULL;
    if (port->write_text(port->ctx, path, data, len, &err) != 0) {
        take_error(why, err, "the client did not write the file");
        return -1;
    }
    free(err);
    return 0;
}

static bool stop_requested(void *ctx)
{
    return cancel_requested(ctx);
}

static int run_command(void *ctx, const tool_io_command *cmd, tool_io_outcome *out, loom_str *why)
{
    const loom_io_port *port = ((api_io *)ctx)->port;
    loom_io_command c = {
        .command = cmd->command,
        .cwd = cmd->cwd,
        .timeout_ms = cmd->timeout_ms,
        .call_id = cmd->call_id,
        .output_limit = cmd->output_limit,
        .stop_requested = stop_requested,
        .stop_ctx = (void *)cmd->cancel,
    };
    loom_io_outcome o = {.exit_code = -1};
    char *err = NULL;
    int rc = port->run_command(port->ctx, &c, &o, &err);
    if (rc != 0) {
        take_error(why, err, "the client did not run the command");
    } else {
        free(err);
        if (o.output)
            str_puts(&out->output, o.output);
        out->truncated = o.truncated;
        out->exit_code = o.exit_code;
        snprintf(out->signal, sizeof out->signal, "%s", o.signal ? o.signal : "");
        out->timed_out = o.timed_out;
        out->cancelled = o.cancelled;
    }
    free(o.output);
    free(o.signal);
    return rc != 0 ? -1 : 0;
}

const tool_io *api_io_init(api_io *io, const loom_io_port *port)
{
    memset(io, 0, sizeof *io);
    if (!port || (!port->read_text && !port->write_text && !port->run_command))
        return NULL;
    io->port = port;
    io->tool.ctx = io;
    io->tool.read_text = port->read_text ? read_text : NULL;
    io->tool.write_text = port->write_text ? write_text : NULL;
    io->tool.run_command = port->run_command ? run_command : NULL;
    return &io->tool;
}
