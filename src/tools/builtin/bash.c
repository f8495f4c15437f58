/* bash.c — the Bash tool: runs `bash -c COMMAND` in the session's working
 * directory, in the foreground through proc_run (own process group, timeout
 * and cancel reaching every descendant) or in the background through the
 * session's task registry.
 *
 * What the model sees: a status line when something went wrong ("Exit code
 * N", a timeout, a signal, an interruption), then stdout, then stderr, each
 * capped by keeping its head and tail. The structured facts go to
 * result.raw under the field names of seed 001 §3.6.
 *
 * Under a sandbox policy (sandbox/sandbox.h) the command runs confined: the
 * rules are built here, put on the child between fork and exec, and what the
 * sandbox blocked is read back from the output into sandboxDenied,
 * sandboxBlockedPaths, networkBlocked and a note for the model.
 *
 * While a foreground command runs, its output goes out as it comes as
 * tool.progress events {call_id, tool, progress: bytes so far, output: the
 * new text} (docs/events.md), at most LIVE_PER_S a second plus one at the
 * end, up to LIVE_CAP bytes a call: the REPL shows the last lines live.
 *
 * With a driver's port (tools/tool_io.h) a foreground command runs in the
 * driver's terminal (bash_driver.c) — but never one a sandbox applies to,
 * nor a background one: those run here as always. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/event.h"
#include "base/proc.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandbox_report.h"
#include "tools/builtin/bash_driver.h"
#include "tools/builtin/builtin.h"
#include "tools/tasks.h"
#include "tools/tool_io.h"

/* Claude Code's numbers: 2 minutes unless asked, never more than 10. */
#define BASH_DEFAULT_TIMEOUT_MS 120000
#define BASH_MAX_TIMEOUT_MS 600000
/* What proc_run keeps of each stream before the head+tail cut; only the
 * first this-many bytes survive, so beyond it the "tail" shown is the end
 * of what was captured (said so in the output). */
#define BASH_CAPTURE_CAP ((size_t)8 << 20)
#define BASH_GRACE_MS 2000
/* Live output: an event at most every 1000/LIVE_PER_S ms; past LIVE_CAP
 * bytes a call the rest is only in the result. */
#define LIVE_PER_S 10
#define LIVE_CAP ((size_t)1 << 20)

static const char BASH_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"command\":{\"type\":\"string\",\"description\":\"The command to execute\"},"
    "\"timeout\":{\"type\":\"number\",\"description\":\"Optional timeout in milliseconds "
    "(default 120000, max 600000)\"},"
    "\"description\":{\"type\":\"string\",\"description\":\"What the command does, in 5-10 "
    "words\"},"
    "\"run_in_background\":{\"type\":\"boolean\",\"description\":\"Run the command in the "
    "background and return at once; read its output with TaskOutput, end it with "
    "TaskStop\"},"
    "\"dangerouslyDisableSandbox\":{\"type\":\"boolean\",\"description\":\"Run the command "
    "outside the sandbox (default false). Needs the user's approval; use it only after the "
    "sandbox blocked a command the user wants run.\"}},"
    "\"required\":[\"command\"],\"additionalProperties\":false}";

static const char BASH_DESCRIPTION[] =
    "Executes a bash command (bash -c) in the session's working directory and returns its "
    "output: stdout, then stderr, with the exit code when it is not zero.\n"
    "- Each call starts a fresh shell: cd and variables do not carry over; prefer absolute "
    "paths.\n"
    "- stdin is /dev/null: interactive commands will not get input.\n"
    "- timeout is in milliseconds (default 120000, max 600000); on timeout the whole process "
    "group is killed.\n"
    "- Long outputs are cut in the middle (head and tail kept).\n"
    "- Prefer the Read, Glob and Grep tools over cat, find and grep.\n"
    "- run_in_background starts long-running commands (servers, watchers, builds) and "
    "returns a task ID for TaskOutput and TaskStop. Processes a command leaves running "
    "(cmd &, nohup, setsid) are killed when the call returns.\n"
    "- Where a sandbox is configured, commands can write (and chmod, touch) only inside the "
    "working directory and temp dirs, cannot read credential stores, and have no network "
    "(Unix sockets included) unless allowed; a blocked command's result says what was "
    "blocked.";

/* A millisecond count from input: true (and *out set if present) unless it
 * is there but not a non-negative number. Models send 5000.0 as often as
 * 5000, so reals are accepted. */
static bool get_ms(const json_t *input, const char *key, long *out)
{
    json_t *v = json_object_get(input, key);
    if (!v || json_is_null(v))
        return true;
    if (!json_is_number(v))
        return false;
    double d = json_number_value(v);
    if (d != d || d < 0)
        return false;
    /* Clamped by the caller; this only keeps the conversion defined. */
    *out = d > 1e9 ? 1000000000L : (long)d;
    return true;
}

static int bash_validate(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    const char *command = json_string_value(json_object_get(input, "command"));
    if (!command) {
        str_puts(why, "command is required and must be a string");
        return -1;
    }
    if (strspn(command, " \t\r\n") == strlen(command)) {
        str_puts(why, "command is empty");
        return -1;
    }
    long t = 0;
    if (!get_ms(input, "timeout", &t)) {
        str_puts(why, "timeout must be a non-negative number of milliseconds");
        return -1;
    }
    return 0;
}

static json_t *raw_of(const proc_result *r, bool interrupted, size_t out_cut, size_t err_cut)
{
    char sig[32];
    bool exited = r->term_signal == 0 && r->exit_code >= 0;
    return json_pack("{s:o, s:o, s:b, s:b, s:I, s:I, s:b}",
                     "exitCode", exited ? json_integer(r->exit_code) : json_null(),
                     "signal", r->term_signal
                                   ? json_string(shell_signal_name(r->term_signal, sig, sizeof sig))
                                   : json_null(),
                     "interrupted", interrupted, "timedOut", r->timed_out,
                     "stdoutBytesTruncated", (json_int_t)out_cut,
                     "stderrBytesTruncated", (json_int_t)err_cut,
                     "sandboxDenied", 0);
}

/* The sandbox decision for one call. */
typedef struct {
    const sandbox_policy *policy; /* confine the command with it; NULL = run as is */
    bool unavailable;             /* a policy applies but the kernel cannot enforce it */
} bash_sandbox;

/* Decides whether and how the call is sandboxed. 0 to go on; otherwise the
 * call is answered (out filled) and must not run. */
static int bash_sandbox_for(const json_t *input, const tool_ctx *ctx, bash_sandbox *sb,
                            tool_result *out)
{
    memset(sb, 0, sizeof *sb);
    /* The session's policy (tool_ctx.sandbox, from its governance). */
    if (ctx->sandbox_error) {
        /* The user asked for a sandbox and it cannot be built: fail closed. */
        tool_error(out, "The command was not run: the sandbox settings are invalid: %s",
                   ctx->sandbox_error);
        return -1;
    }
    const sandbox_policy *policy = ctx->sandbox && ctx->sandbox->enabled ? ctx->sandbox : NULL;
    if (!policy)
        return 0;
    /* The governance pipeline asks a person before a call with
     * dangerouslyDisableSandbox gets here (needs_user), so reaching this
     * line means it was approved. */
    if (json_is_true(json_object_get(input, "dangerouslyDisableSandbox")))
        return 0;
    if (sandbox_supported() < 1) {
        const char *why = sandbox_unsupported_reason();
        if (policy->on_unsupported == SANDBOX_UNSUPPORTED_REFUSE) {
            tool_error(out, "The command was not run: the sandbox is enabled but not supported "
                            "on this system (%s). Tell the user; they can set "
                            "sandbox.onUnsupported to \"warn\" to run commands unsandboxed.",
                       why);
            return -1;
        }
        sb->unavailable = true;
        return 0;
    }
    sb->policy = policy;
    return 0;
}

static void note_unavailable(tool_result *out)
{
    loom_str *t = &out->text;
    if (t->len && t->ptr[t->len - 1] != '\n')
        str_putc(t, '\n');
    str_printf(t, "\n[sandbox] Not supported on this system (%s): the command ran without it.",
               sandbox_unsupported_reason());
    if (out->raw)
        json_object_set_new(out->raw, "sandboxUnavailable", json_true());
}

static int run_background(const char *command, const char *description, tool_ctx *ctx,
                          const bash_sandbox *sb, tool_result *out)
{
    /* Background tasks start through posix_spawn, which has no place to
     * apply the sandbox; running them unconfined would be a way around it. */
    if (sb->policy)
        return tool_error(out, "run_in_background is not available while the sandbox is on; "
                               "run the command in the foreground (with a timeout) instead.");
    if (!ctx->tasks)
        return tool_error(out, "Background commands are not available here; run the command "
                               "without run_in_background.");
    char *id = NULL;
    loom_error err;
    loom_error_clear(&err);
    if (task_registry_start(ctx->tasks, command, ctx->cwd, description, &id, &err) < 0)
        return tool_error(out, "Could not start the command: %s", err.message);
    str_printf(&out->text,
               "Command running in background with ID: %s\n"
               "Read its output with TaskOutput (task_id \"%s\"); stop it with TaskStop.",
               id, id);
    out->raw = json_pack("{s:s, s:b}", "backgroundTaskId", id, "sandboxDenied", 0);
    free(id);
    if (sb->unavailable)
        note_unavailable(out);
    return 0;
}

/* What has been read and not yet sent, for one call. */
typedef struct live_out {
    tool_ctx *ctx;
    loom_str held;
    size_t taken;     /* bytes taken into held so far (sent or not) */
    int64_t last_ms;  /* when the last event went out */
} live_out;

/* Sends held up to its last whole UTF-8 character. */
static void live_send(live_out *lo)
{
    size_t n = lo->held.len;
    size_t back = 0; /* an unfinished character at the end waits */
    while (back < 3 && back < n && ((unsigned char)lo->held.ptr[n - 1 - back] & 0xC0) == 0x80)
        back++;
    if (back < n) {
        unsigned char lead = (unsigned char)lo->held.ptr[n - 1 - back];
        size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
        if (need > back + 1)
            n -= back + 1;
    }
    if (!n)
        return;
    lo->ctx->emit(lo->ctx->emit_ctx, LOOM_EV_TOOL_PROGRESS,
                  event_tool_output(lo->ctx->call_id, "Bash", lo->taken - (lo->held.len - n),
                                    lo->held.ptr, n));
    str_consume(&lo->held, n);
}

static void live_output(void *p, int stream, const char *data, size_t n)
{
    live_out *lo = p;
    if (stream && n && lo->taken < LIVE_CAP) {
        size_t keep = n < LIVE_CAP - lo->taken ? n : LIVE_CAP - lo->taken;
        str_append(&lo->held, data, keep);
        lo->taken += keep;
    }
    int64_t now = clock_mono_ms();
    if (!lo->held.len || now - lo->last_ms < 1000 / LIVE_PER_S)
        return;
    lo->last_ms = now;
    live_send(lo);
}


/* The command runs inside the call's execute_tool span: TRACEPARENT lets a
 * traced program (curl --trace-context, an OTel SDK) join the trace. */
static char **with_traceparent(char **env, const tool_ctx *ctx)
{
    char tp[56];
    if (!env || !ctx->traceparent || !ctx->traceparent(ctx->traceparent_ctx, ctx->call_id, tp))
        return env;
    size_t n = 0;
    while (env[n])
        n++;
    char **out = realloc(env, (n + 2) * sizeof *out);
    if (!out)
        return env;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(out[i], "TRACEPARENT=", 12) == 0)
            free(out[i]); /* ours replaces an inherited one */
        else
            out[k++] = out[i];
    }
    out[k] = malloc(strlen(tp) + 13);
    if (out[k])
        snprintf(out[k++], strlen(tp) + 13, "TRACEPARENT=%s", tp);
    out[k] = NULL;
    return out;
}

static int bash_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    loom_str why = LOOM_STR_INIT;
    if (bash_validate(input, ctx, &why) != 0) {
        tool_error(out, "Invalid input: %s", str_cstr(&why));
        str_free(&why);
        return 0;
    }
    const char *command = json_string_value(json_object_get(input, "command"));
    const char *description = json_string_value(json_object_get(input, "description"));
    bash_sandbox sb;
    if (bash_sandbox_for(input, ctx, &sb, out) != 0)
        return 0;
    if (json_is_true(json_object_get(input, "run_in_background")))
        return run_background(command, description, ctx, &sb, out);

    long timeout = BASH_DEFAULT_TIMEOUT_MS;
    get_ms(input, "timeout", &timeout);
    if (timeout <= 0)
        timeout = BASH_DEFAULT_TIMEOUT_MS;
    if (timeout > BASH_MAX_TIMEOUT_MS)
        timeout = BASH_MAX_TIMEOUT_MS;
    if (ctx->timeout_ms > 0 && ctx->timeout_ms < timeout)
        timeout = ctx->timeout_ms;
    /* The driver's terminal, unless a sandbox applies: its terminal runs
     * outside Loom's confinement, so a sandboxed command stays here. */
    if (ctx->io && ctx->io->run_command && !sb.policy && !sb.unavailable)
        return bash_run_driver(command, timeout, ctx, out);

    char **env = with_traceparent(shell_env_new(), ctx);
    const char *argv[] = {"bash", "-c", command, NULL};
    proc_spec spec = {
        .argv = argv,
        .envp = (const char *const *)env,
        .cwd = ctx->cwd,
        .timeout_ms = timeout,
        .grace_ms = BASH_GRACE_MS,
        .capture_cap = BASH_CAPTURE_CAP,
        .cancel = ctx->cancel,
    };
    /* The rules are built here, in the threaded parent; the child only
     * enters them (sandbox_child_setup makes system calls, nothing else). */
    sandbox_prep *prep = NULL;
    if (sb.policy) {
        char msg[512];
        if (sandbox_prepare(sb.policy, &prep, msg, sizeof msg) != 0) {
            shell_env_free(env);
            return tool_error(out, "The command was not run: could not set up the sandbox: %s",
                              msg);
        }
        /* With network.allowedDomains, the command finds the proxy by these. */
        env = sandbox_env_with_proxy(prep, env);
        spec.envp = (const char *const *)env;
        spec.child_setup = sandbox_child_setup;
        spec.child_ctx = prep;
        /* Loom judges the metadata calls (and allowed Unix connects) the
         * filter cannot: the paths are behind pointers. */
        spec.supervise = sandbox_supervise;
        spec.supervise_ctx = prep;
    }
    live_out live = {.ctx = ctx};
    if (ctx->emit) {
        spec.on_output = live_output;
        spec.output_ctx = &live;
    }
    proc_result r;
    loom_error err;
    loom_error_clear(&err);
    int rc = proc_run(&spec, &r, &err);
    if (live.held.len)
        live_send(&live); /* the end: what was held back */
    str_free(&live.held);
    char refused[256];
    sandbox_prep_proxy_refused(prep, refused, sizeof refused);
    sandbox_prep_free(prep);
    shell_env_free(env);
    if (rc < 0) {
        if (r.cancelled) {
            tool_error(out, "Command was interrupted before it started");
            out->raw = raw_of(&r, true, 0, 0);
            return 0;
        }
        return tool_error(out, "Could not run the command: %s", err.message);
    }

    char sig[32];
    loom_str *t = &out->text;
    if (r.cancelled && cancel_level(ctx->cancel) >= CANCEL_ACT)
        str_puts(t, "Command was stopped by the harness: a change in the world needs attention "
                    "(see the events in your working memory)\n");
    else if (r.cancelled)
        str_puts(t, "Command was interrupted\n");
    else if (r.timed_out)
        str_printf(t, "Command timed out after %ld ms\n", timeout);
    else if (r.term_signal)
        str_printf(t, "Command was killed by signal %d (%s)\n", r.term_signal,
                   shell_signal_name(r.term_signal, sig, sizeof sig));
    else if (r.exit_code != 0)
        str_printf(t, "Exit code %d\n", r.exit_code);

    size_t cap = shell_output_cap();
    loom_str so = LOOM_STR_INIT, se = LOOM_STR_INIT;
    size_t out_cut = shell_append_capped(&so, r.out, r.out_len, cap, r.out_dropped);
    size_t err_cut = shell_append_capped(&se, r.err, r.err_len, cap, r.err_dropped);
    str_append(t, so.ptr, so.len);
    if (se.len) {
        if (t->len && t->ptr[t->len - 1] != '\n')
            str_putc(t, '\n');
        str_append(t, se.ptr, se.len);
    }
    str_free(&so);
    str_free(&se);
    while (t->len > 0 && t->ptr[t->len - 1] == '\n')
        t->ptr[--t->len] = '\0';
    if (t->len == 0)
        str_puts(t, "(no output)");

    out->is_error = r.cancelled || r.timed_out || r.term_signal != 0 || r.exit_code != 0;
    out->raw = raw_of(&r, r.cancelled, out_cut, err_cut);
    if (sb.policy) {
        sandbox_denial d;
        sandbox_report_analyze(sb.policy, ctx->cwd, r.out, r.out_len, r.err, r.err_len, &d);
        sandbox_denial_note_proxy(&d, refused);
        sandbox_report_apply(sb.policy, &d, out->raw, &out->text);
        sandbox_denial_free(&d);
    } else if (sb.unavailable) {
        note_unavailable(out);
    }
    proc_result_free(&r);
    return 0;
}

const tool_def tool_bash = {
    .name = "Bash",
    .description = BASH_DESCRIPTION,
    .input_schema = BASH_SCHEMA,
    .read_only = false,
    .concurrency_safe = false,
    .validate = bash_validate,
    .run = bash_run,
};
