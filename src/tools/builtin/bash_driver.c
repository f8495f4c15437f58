/* bash_driver.c — Bash through the driver's terminal (bash_driver.h).
 *
 * The driver (an editor) runs the command where the person sees it and
 * hands back one combined output and the exit status; the result the model
 * reads is worded as for a local run, so nothing downstream tells the two
 * apart but raw's "ranBy". Cancel and timeout reach the driver through the
 * command (it polls the run's cancel flag and keeps the deadline). */
#include "tools/builtin/bash_driver.h"

#include <string.h>

#include "base/json.h"
#include "tools/tasks.h"
#include "tools/tool_io.h"

/* Output bytes the driver is asked to keep (its newest ones). */
#define BASH_DRIVER_OUTPUT_LIMIT ((size_t)1 << 20)

static void status_line(loom_str *t, const tool_io_outcome *o, const tool_ctx *ctx,
                        long timeout_ms)
{
    if (o->cancelled && cancel_level(ctx->cancel) >= CANCEL_ACT)
        str_puts(t, "Command was stopped by the harness: a change in the world needs attention "
                    "(see the events in your working memory)\n");
    else if (o->cancelled)
        str_puts(t, "Command was interrupted\n");
    else if (o->timed_out)
        str_printf(t, "Command timed out after %ld ms\n", timeout_ms);
    else if (o->signal[0])
        str_printf(t, "Command was killed by signal %s\n", o->signal);
    else if (o->exit_code < 0)
        str_puts(t, "Command ended without an exit status\n");
    else if (o->exit_code != 0)
        str_printf(t, "Exit code %d\n", o->exit_code);
}

int bash_run_driver(const char *command, long timeout_ms, tool_ctx *ctx, tool_result *out)
{
    tool_io_command cmd = {
        .command = command,
        .cwd = ctx->cwd,
        .timeout_ms = timeout_ms,
        .call_id = ctx->call_id,
        .output_limit = BASH_DRIVER_OUTPUT_LIMIT,
        .cancel = ctx->cancel,
    };
    tool_io_outcome o;
    memset(&o, 0, sizeof o);
    o.output = (loom_str)LOOM_STR_INIT;
    o.exit_code = -1;
    loom_str why = LOOM_STR_INIT;
    if (ctx->io->run_command(ctx->io->ctx, &cmd, &o, &why) != 0) {
        tool_error(out, "Could not run the command: %s", why.len ? why.ptr : "the client failed");
        str_free(&why);
        str_free(&o.output);
        return 0;
    }
    str_free(&why);
    loom_str *t = &out->text;
    status_line(t, &o, ctx, timeout_ms);
    if (o.truncated)
        str_printf(t, "[only the last %zu bytes of the output were kept]\n",
                   BASH_DRIVER_OUTPUT_LIMIT);
    size_t cut = shell_append_capped(t, o.output.ptr ? o.output.ptr : "", o.output.len,
                                     shell_output_cap(), 0);
    while (t->len > 0 && t->ptr[t->len - 1] == '\n')
        t->ptr[--t->len] = '\0';
    if (t->len == 0)
        str_puts(t, "(no output)");
    bool exited = !o.signal[0] && o.exit_code >= 0;
    out->is_error = o.cancelled || o.timed_out || !exited || o.exit_code != 0;
    out->raw = json_pack("{s:o, s:o, s:b, s:b, s:I, s:I, s:b, s:s, s:b}",
                         "exitCode", exited ? json_integer(o.exit_code) : json_null(),
                         "signal", o.signal[0] ? json_string(o.signal) : json_null(),
                         "interrupted", o.cancelled, "timedOut", o.timed_out,
                         "stdoutBytesTruncated", (json_int_t)cut, "stderrBytesTruncated",
                         (json_int_t)0, "sandboxDenied", 0, "ranBy", "driver",
                         "outputTruncated", o.truncated);
    str_free(&o.output);
    return 0;
}
