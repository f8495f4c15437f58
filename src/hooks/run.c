/* run.c — executes the hooks of one event and merges their answers: the
 * 8 steps of seed 001 §6.2 (input, environment, match value, built-ins and
 * settings hooks, matcher, `if`, dedupe — those three in registry.c's plan —
 * then execution), the four hook types, and the hook_outcome the loop and
 * the tool pipeline read. Owns the interpretation of a hook's answer
 * (exit codes, stdout JSON, HTTP status) so every type is read one way. */
#include "hooks/run.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/log.h"
#include "base/proc.h"
#include "base/str.h"
#include "hooks/internal.h"
#include "net/http.h"

extern char **environ;

/* An http hook's 2xx body is read like a command's stdout; a hook has no
 * business answering with more than this. */
#define HOOK_HTTP_BODY_CAP ((size_t)1 << 20)
/* Long stderr is cut in notices so one noisy hook cannot flood the screen;
 * the audit result keeps the same excerpt. */
#define HOOK_NOTICE_EXCERPT 2000
/* How long a hook that ignores SIGTERM at its timeout gets before SIGKILL. */
#define HOOK_KILL_GRACE_MS 1000
#define HOOK_HTTP_CONNECT_MS 10000L

const char *hook_status_name(hook_status st)
{
    static const char *const names[] = {"ok", "blocked", "error", "timeout", "cancelled", "skipped"};
    return (unsigned)st < sizeof names / sizeof names[0] ? names[st] : "?";
}

/* The state of one hooks_run: the outcome being built plus text
 * accumulators turned into the outcome's strings at the end. */
typedef struct run_ctx {
    hook_outcome *out;
    hook_event ev;
    const hook_run_opts *opts;
    json_t *payload;          /* our copy, with hook_event_name and cwd */
    char *payload_json;       /* what stdin / the POST body carries */
    const char *project_dir;
    const char *cwd;
    char **envp;              /* built on first command hook */
    long default_timeout_ms;
    loom_str perm_reason, block_reason, context, stop_reason;
    char *input_from;         /* label of the hook whose updatedInput stands */
    size_t notice_cap;
} run_ctx;

static bool is_permission_event(hook_event ev)
{
    return ev == HOOK_PRE_TOOL_USE || ev == HOOK_PERMISSION_REQUEST;
}

static void notice(run_ctx *c, hook_notice_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void notice(run_ctx *c, hook_notice_kind kind, const char *fmt, ...)
{
    hook_outcome *o = c->out;
    if (o->n_notices == c->notice_cap) {
        c->notice_cap = c->notice_cap ? c->notice_cap * 2 : 4;
        o->notices = xrealloc(o->notices, c->notice_cap * sizeof *o->notices);
    }
    loom_str s = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&s, fmt, ap);
    va_end(ap);
    o->notices[o->n_notices].kind = kind;
    o->notices[o->n_notices].text = str_steal(&s);
    o->n_notices++;
}

static void join_line(loom_str *s, const char *text)
{
    if (!text || !*text)
        return;
    if (s->len)
        str_putc(s, '\n');
    str_puts(s, text);
}

/* Trimmed copy of at most HOOK_NOTICE_EXCERPT bytes, cut on a UTF-8
 * boundary, "…" marking a cut. */
static char *excerpt(const char *text, size_t len)
{
    while (len && isspace((unsigned char)*text)) {
        text++;
        len--;
    }
    while (len && isspace((unsigned char)text[len - 1]))
        len--;
    if (len <= HOOK_NOTICE_EXCERPT)
        return xstrndup(text, len);
    size_t cut = HOOK_NOTICE_EXCERPT;
    while (cut && ((unsigned char)text[cut] & 0xC0) == 0x80)
        cut--;
    loom_str s = LOOM_STR_INIT;
    str_append(&s, text, cut);
    str_puts(&s, "…");
    return str_steal(&s);
}

static void set_message(hook_result *r, const char *text)
{
    free(r->message);
    r->message = xstrdup(text);
}

/* ---- merging answers ---------------------------------------------------- */

/* deny > ask > allow (perm_verdict's order): a stronger verdict replaces
 * the reasons, an equal one adds its own. */
static void apply_verdict(run_ctx *c, hook_result *r, perm_verdict v, const char *reason)
{
    r->verdict = v;
    hook_outcome *o = c->out;
    loom_str dflt = LOOM_STR_INIT;
    if (!reason || !*reason) {
        str_printf(&dflt, "%s by hook %s", perm_verdict_name(v), r->label);
        reason = dflt.ptr;
    }
    if (v > o->permission) {
        o->permission = v;
        str_clear(&c->perm_reason);
        str_puts(&c->perm_reason, reason);
    } else if (v == o->permission) {
        join_line(&c->perm_reason, reason);
    }
    str_free(&dflt);
}

static void apply_block(run_ctx *c, hook_result *r, const char *reason)
{
    r->status = HOOK_STATUS_BLOCKED;
    if (is_permission_event(c->ev)) {
        apply_verdict(c, r, PERM_DENY, reason);
        return;
    }
    c->out->blocked = true;
    if (reason && *reason) {
        join_line(&c->block_reason, reason);
    } else {
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "blocked by hook %s", r->label);
        join_line(&c->block_reason, s.ptr);
        str_free(&s);
    }
}

static void apply_updated_input(run_ctx *c, hook_result *r, const json_t *in)
{
    if (!json_is_object(in)) {
        notice(c, HOOK_NOTICE_WARNING, "hook %s (%s): \"updatedInput\" is not an object; ignored",
               r->label, hook_event_name(c->ev));
        return;
    }
    /* SubagentStart's rewrites the Agent call's input (the prompt, the
     * type…); the caller checks it again (pipeline_recheck_input). */
    if (!is_permission_event(c->ev) && c->ev != HOOK_SUBAGENT_START) {
        notice(c, HOOK_NOTICE_WARNING,
               "hook %s: \"updatedInput\" only applies to PreToolUse, PermissionRequest and "
               "SubagentStart; ignored for %s",
               r->label, hook_event_name(c->ev));
        return;
    }
    hook_outcome *o = c->out;
    if (o->updated_input && !json_equal(o->updated_input, (json_t *)in))
        notice(c, HOOK_NOTICE_WARNING,
               "hooks %s and %s both changed the tool input; using %s's (the later one)",
               c->input_from, r->label, r->label);
    json_decref(o->updated_input);
    o->updated_input = json_deep_copy(in);
    free(c->input_from);
    c->input_from = xstrdup(r->label);
}

/* A perm_verdict, or -1 for a value that is none of them. */
static int verdict_of(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "allow") == 0)
        return PERM_ALLOW;
    if (strcmp(s, "deny") == 0)
        return PERM_DENY;
    /* "defer" (Claude Code: leave it to the normal flow) asks, the
     * conservative reading for an interactive harness. */
    if (strcmp(s, "ask") == 0 || strcmp(s, "defer") == 0)
        return PERM_ASK;
    return -1;
}

static void apply_specific(run_ctx *c, hook_result *r, const json_t *hso, perm_verdict *v,
                           const char **vreason)
{
    const char *evname = hook_event_name(c->ev);
    const char *hen = json_get_str(hso, "hookEventName", NULL);
    if (hen && strcmp(hen, evname) != 0) {
        notice(c, HOOK_NOTICE_WARNING,
               "hook %s answered hookSpecificOutput for %s while handling %s; ignored", r->label,
               hen, evname);
        return;
    }
    if (c->ev == HOOK_PRE_TOOL_USE) {
        const json_t *pd = json_object_get(hso, "permissionDecision");
        if (pd) {
            int pv = verdict_of(json_string_value(pd));
            if (pv < 0)
                notice(c, HOOK_NOTICE_WARNING,
                       "hook %s: permissionDecision must be allow, deny or ask; ignored", r->label);
            else {
                *v = (perm_verdict)pv;
                *vreason = json_get_str(hso, "permissionDecisionReason", NULL);
            }
        }
    }
    if (c->ev == HOOK_PERMISSION_REQUEST) {
        /* Claude Code's PermissionRequest answer:
         * {"decision": {"behavior": "allow"|"deny", "message", "updatedInput"}} */
        const json_t *d = json_get_obj(hso, "decision");
        if (d) {
            const char *b = json_get_str(d, "behavior", NULL);
            int pv = verdict_of(b);
            if (pv < 0)
                notice(c, HOOK_NOTICE_WARNING,
                       "hook %s: decision.behavior must be allow or deny; ignored", r->label);
            else {
                *v = (perm_verdict)pv;
                *vreason = json_get_str(d, "message", NULL);
            }
            if (json_object_get(d, "updatedInput"))
                apply_updated_input(c, r, json_object_get(d, "updatedInput"));
        }
    }
    if (c->ev == HOOK_ELICITATION && json_object_get(hso, "action")) {
        const char *act = json_get_str(hso, "action", "");
        const json_t *content = json_object_get(hso, "content");
        if (strcmp(act, "accept") && strcmp(act, "decline") && strcmp(act, "cancel"))
            notice(c, HOOK_NOTICE_WARNING,
                   "hook %s: Elicitation action must be accept, decline or cancel; ignored",
                   r->label);
        else if (content && !json_is_object(content))
            notice(c, HOOK_NOTICE_WARNING,
                   "hook %s: Elicitation content must be an object; ignored", r->label);
        else {
            json_decref(c->out->elicitation);
            c->out->elicitation = json_pack("{s:s}", "action", act);
            if (content && !strcmp(act, "accept"))
                json_object_set_new(c->out->elicitation, "content", json_deep_copy(content));
        }
    }
    const json_t *ui = json_object_get(hso, "updatedInput");
    if (ui)
        apply_updated_input(c, r, ui);
    const char *ctx = json_get_str(hso, "additionalContext", NULL);
    if (ctx)
        join_line(&c->context, ctx);
}

/* A hook's JSON answer: Claude Code's common fields, its decision fields,
 * hookSpecificOutput, and a prompt hook's {ok, reason}. */
static void apply_reply(run_ctx *c, hook_result *r, const json_t *o)
{
    hook_outcome *out = c->out;
    if (json_is_false(json_object_get(o, "continue"))) {
        out->stop = true;
        const char *sr = json_get_str(o, "stopReason", NULL);
        if (sr && *sr)
            join_line(&c->stop_reason, sr);
    }
    if (json_is_true(json_object_get(o, "suppressOutput")))
        out->suppress_output = true;
    const char *sm = json_get_str(o, "systemMessage", NULL);
    if (sm && *sm)
        notice(c, HOOK_NOTICE_MESSAGE, "%s", sm);

    perm_verdict v = PERM_NONE;
    const char *vreason = NULL;
    const char *reason = json_get_str(o, "reason", NULL);
    bool block = json_is_false(json_object_get(o, "ok"));
    const char *decision = json_get_str(o, "decision", NULL);
    if (decision && strcmp(decision, "block") == 0) {
        block = true;
    } else if (decision && strcmp(decision, "approve") == 0) {
        if (is_permission_event(c->ev)) {
            v = PERM_ALLOW;
            vreason = reason;
        }
    } else if (decision && *decision) {
        notice(c, HOOK_NOTICE_WARNING, "hook %s: unknown decision \"%s\" (block or approve); ignored",
               r->label, decision);
    }
    if (block && is_permission_event(c->ev)) {
        v = PERM_DENY;
        vreason = reason;
    } else if (block) {
        apply_block(c, r, reason);
    }

    const json_t *hso = json_get_obj(o, "hookSpecificOutput");
    if (hso)
        apply_specific(c, r, hso, &v, &vreason); /* its permissionDecision wins over "decision" */
    if (v != PERM_NONE) {
        apply_verdict(c, r, v, vreason);
        if (v == PERM_DENY)
            r->status = HOOK_STATUS_BLOCKED;
        if (vreason && *vreason && !r->message)
            set_message(r, vreason);
    }
    if (block && reason && !r->message)
        set_message(r, reason);
}

/* Output of a hook that succeeded: JSON when it starts with '{', else text.
 * Claude Code feeds plain text to the model for UserPromptSubmit and
 * SessionStart; elsewhere it is only shown in verbose mode. */
static void apply_text(run_ctx *c, hook_result *r, const char *text, size_t len)
{
    while (len && isspace((unsigned char)*text)) {
        text++;
        len--;
    }
    if (!len)
        return;
    if (*text == '{') {
        loom_error err;
        loom_error_clear(&err);
        json_t *o = json_parse(text, len, "hook output", &err);
        if (!o) {
            r->status = HOOK_STATUS_ERROR;
            set_message(r, err.message);
            notice(c, HOOK_NOTICE_ERROR,
                   "hook %s (%s) printed invalid JSON, so its answer was ignored: %s", r->label,
                   hook_event_name(c->ev), err.message);
            return;
        }
        apply_reply(c, r, o);
        /* Claude Code: suppressOutput keeps the hook's stdout out of the
         * transcript view; the rest of the answer still applies. */
        if (!json_is_true(json_object_get(o, "suppressOutput")))
            r->output = excerpt(text, len);
        json_decref(o);
        return;
    }
    char *t = excerpt(text, len);
    r->output = xstrdup(t);
    if (c->ev == HOOK_USER_PROMPT_SUBMIT || c->ev == HOOK_SESSION_START) {
        join_line(&c->context, t);
    } else {
        notice(c, HOOK_NOTICE_OUTPUT, "%s: %s", r->label, t);
    }
    free(t);
}

/* ---- executing one hook ------------------------------------------------- */

static long timeout_of(const run_ctx *c, const hook_def *d)
{
    return d->timeout_ms > 0 ? d->timeout_ms : c->default_timeout_ms;
}

static void timed_out(run_ctx *c, hook_result *r, long timeout_ms)
{
    r->status = HOOK_STATUS_TIMEOUT;
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "timed out after %.3g s and was stopped", (double)timeout_ms / 1000.0);
    set_message(r, s.ptr);
    notice(c, HOOK_NOTICE_ERROR, "hook %s (%s) %s; it did not block anything", r->label,
           hook_event_name(c->ev), s.ptr);
    str_free(&s);
}

/* Built once per hooks_run, when its first command hook runs: the trace
 * context is per firing, so it is part of what is built, not a later edit. */
static char **build_env(const char *project_dir, const char *traceparent)
{
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = xcalloc(n + 4, sizeof *env);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strncmp(environ[i], "CLAUDE_PROJECT_DIR=", 19) == 0 ||
            strncmp(environ[i], "LOOM_PROJECT_DIR=", 17) == 0 ||
            (traceparent && strncmp(environ[i], "TRACEPARENT=", 12) == 0))
            continue;
        env[k++] = xstrdup(environ[i]);
    }
    if (project_dir) {
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "CLAUDE_PROJECT_DIR=%s", project_dir);
        env[k++] = str_steal(&s);
        str_printf(&s, "LOOM_PROJECT_DIR=%s", project_dir);
        env[k++] = str_steal(&s);
    }
    if (traceparent) {
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "TRACEPARENT=%s", traceparent);
        env[k++] = str_steal(&s);
    }
    env[k] = NULL;
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

static void run_command(run_ctx *c, const hook_def *d, hook_result *r)
{
    if (!c->envp)
        c->envp = build_env(c->project_dir, c->opts->traceparent);
    const char *argv[] = {"bash", "-c", d->command, NULL};
    long timeout_ms = timeout_of(c, d);
    proc_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.argv = argv;
    sp.envp = (const char *const *)c->envp;
    sp.cwd = c->cwd;
    sp.input = c->payload_json;
    sp.input_len = strlen(c->payload_json);
    sp.timeout_ms = timeout_ms;
    sp.grace_ms = HOOK_KILL_GRACE_MS;
    sp.cancel = c->opts->cancel;
    sp.child_setup = c->opts->child_setup;
    sp.child_ctx = c->opts->child_ctx;
    sp.supervise = c->opts->supervise;
    sp.supervise_ctx = c->opts->child_ctx;
    proc_result pr;
    memset(&pr, 0, sizeof pr);
    loom_error err;
    loom_error_clear(&err);
    if (proc_run(&sp, &pr, &err) < 0) {
        r->status = HOOK_STATUS_ERROR;
        r->exit_code = -1;
        set_message(r, err.message);
        notice(c, HOOK_NOTICE_ERROR, "hook %s (%s) could not be started: %s", r->label,
               hook_event_name(c->ev), err.message);
        return;
    }
    r->exit_code = pr.exit_code;
    r->duration_ms = pr.duration_ms;
    if (pr.cancelled) {
        r->status = HOOK_STATUS_CANCELLED;
        set_message(r, "cancelled");
    } else if (pr.timed_out) {
        timed_out(c, r, timeout_ms);
    } else if (pr.exit_code == 0) {
        if (pr.out_dropped)
            notice(c, HOOK_NOTICE_WARNING, "hook %s: stdout over %zu bytes was cut", r->label,
                   pr.out_len);
        apply_text(c, r, pr.out, pr.out_len);
    } else if (pr.exit_code == 2) {
        /* Claude Code: exit 2 blocks and stderr is the reason; stdout is
         * not read. */
        char *why = excerpt(pr.err ? pr.err : "", pr.err_len);
        apply_block(c, r, why);
        set_message(r, *why ? why : "blocked (exit 2) without a reason on stderr");
        free(why);
    } else {
        r->status = HOOK_STATUS_ERROR;
        char *why = excerpt(pr.err ? pr.err : "", pr.err_len);
        loom_str s = LOOM_STR_INIT;
        if (pr.term_signal)
            str_printf(&s, "killed by signal %d", pr.term_signal);
        else
            str_printf(&s, "exit code %d", pr.exit_code);
        if (*why)
            str_printf(&s, ": %s", why);
        set_message(r, s.ptr);
        notice(c, HOOK_NOTICE_ERROR, "hook %s (%s) failed (%s); not blocking", r->label,
               hook_event_name(c->ev), s.ptr);
        str_free(&s);
        free(why);
    }
    proc_result_free(&pr);
}

/* $VAR and ${VAR} in header values, resolved only for names the hook lists
 * in allowedEnvVars (Claude Code's rule: settings must not be able to
 * exfiltrate arbitrary environment); other references become empty. */
static char *expand_header(const char *v, const json_t *allowed)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "");
    for (const char *p = v; *p;) {
        if (*p != '$') {
            str_putc(&s, *p++);
            continue;
        }
        const char *q = p + 1;
        bool braced = *q == '{';
        if (braced)
            q++;
        const char *name = q;
        while (isalnum((unsigned char)*q) || *q == '_')
            q++;
        size_t n = (size_t)(q - name);
        if (!n || (braced && *q != '}')) {
            str_putc(&s, *p++);
            continue;
        }
        char *var = xstrndup(name, n);
        size_t i;
        const json_t *a;
        json_array_foreach(allowed, i, a) {
            if (json_is_string(a) && strcmp(json_string_value(a), var) == 0) {
                const char *val = getenv(var);
                str_puts(&s, val ? val : "");
                break;
            }
        }
        free(var);
        p = q + (braced ? 1 : 0);
    }
    return str_steal(&s);
}

typedef struct {
    loom_str body;
    bool too_big;
} http_sink;

static int http_collect(void *ctx, const char *data, size_t len)
{
    http_sink *s = ctx;
    if (s->body.len + len > HOOK_HTTP_BODY_CAP) {
        s->too_big = true;
        return 1;
    }
    str_append(&s->body, data, len);
    return 0;
}

static void run_http(run_ctx *c, const hook_def *d, hook_result *r)
{
    http_global_init();
    const json_t *hdrs = json_get_obj(d->config, "headers");
    const json_t *allowed = json_get_arr(d->config, "allowedEnvVars");
    size_t nh = hdrs ? json_object_size(hdrs) : 0;
    char **headers = xcalloc(nh + 2, sizeof *headers);
    size_t k = 0;
    headers[k++] = xstrdup("Content-Type: application/json");
    const char *name;
    const json_t *val;
    if (hdrs) {
        json_object_foreach((json_t *)hdrs, name, val) {
            char *v = expand_header(json_string_value(val), allowed);
            loom_str h = LOOM_STR_INIT;
            str_printf(&h, "%s: %s", name, v);
            headers[k++] = str_steal(&h);
            free(v);
        }
    }
    headers[k] = NULL;

    long timeout_ms = timeout_of(c, d);
    http_request req;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.url = d->url;
    req.headers = (const char *const *)headers;
    req.body = c->payload_json;
    req.body_len = strlen(c->payload_json);
    req.connect_timeout_ms = timeout_ms < HOOK_HTTP_CONNECT_MS ? timeout_ms : HOOK_HTTP_CONNECT_MS;
    /* The hook's timeout bounds the whole exchange: a server that trickles
     * bytes for ever must not hold the event past it. */
    req.idle_timeout_ms = timeout_ms;
    req.total_timeout_ms = timeout_ms;
    req.cancel = c->opts->cancel;
    http_response resp;
    memset(&resp, 0, sizeof resp);
    http_sink sink = {LOOM_STR_INIT, false};
    loom_error err;
    loom_error_clear(&err);
    int64_t t0 = clock_mono_ms();
    int rc = http_perform(&req, http_collect, &sink, &resp, &err);
    r->duration_ms = (long)(clock_mono_ms() - t0);
    r->exit_code = (int)resp.status;
    if (rc < 0 && err.code == LOOM_ERR_RUN_CANCELLED) {
        r->status = HOOK_STATUS_CANCELLED;
        set_message(r, "cancelled");
    } else if (rc < 0 && err.code == LOOM_ERR_MODEL_TIMEOUT) {
        timed_out(c, r, timeout_ms);
    } else if (rc < 0 || sink.too_big) {
        r->status = HOOK_STATUS_ERROR;
        const char *why = sink.too_big ? "the response body is over 1 MiB" : err.message;
        set_message(r, why);
        notice(c, HOOK_NOTICE_ERROR, "hook %s (%s) failed: %s; not blocking", r->label,
               hook_event_name(c->ev), why);
    } else if (resp.status < 200 || resp.status > 299) {
        r->status = HOOK_STATUS_ERROR;
        char *body = excerpt(str_cstr(&resp.error_body), resp.error_body.len);
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "HTTP %ld", resp.status);
        if (*body)
            str_printf(&s, ": %s", body);
        set_message(r, s.ptr);
        notice(c, HOOK_NOTICE_ERROR, "hook %s (%s) answered %s; not blocking", r->label,
               hook_event_name(c->ev), s.ptr);
        str_free(&s);
        free(body);
    } else {
        apply_text(c, r, str_cstr(&sink.body), sink.body.len);
    }
    str_free(&sink.body);
    http_response_free(&resp);
    for (size_t i = 0; headers[i]; i++)
        free(headers[i]);
    free(headers);
}

/* A C or integrator-supplied answer: an object (or nothing) read like a
 * command hook's stdout JSON. */
static void take_reply(run_ctx *c, hook_result *r, int rc, json_t *reply, const loom_error *err)
{
    if (rc < 0) {
        r->status = err->code == LOOM_ERR_RUN_CANCELLED ? HOOK_STATUS_CANCELLED
                    : err->code == LOOM_ERR_MODEL_TIMEOUT ? HOOK_STATUS_TIMEOUT
                                                          : HOOK_STATUS_ERROR;
        set_message(r, err->message[0] ? err->message : "failed");
        if (r->status != HOOK_STATUS_CANCELLED)
            notice(c, HOOK_NOTICE_ERROR, "hook %s (%s) failed: %s; not blocking", r->label,
                   hook_event_name(c->ev), r->message);
    } else if (reply && !json_is_object(reply)) {
        r->status = HOOK_STATUS_ERROR;
        set_message(r, "answer is not a JSON object");
        notice(c, HOOK_NOTICE_ERROR, "hook %s (%s) answered something other than a JSON object; "
               "ignored", r->label, hook_event_name(c->ev));
    } else if (reply) {
        apply_reply(c, r, reply);
    }
    json_decref(reply);
}

static void run_builtin(run_ctx *c, const hook_def *d, hook_result *r)
{
    json_t *reply = NULL;
    loom_error err;
    loom_error_clear(&err);
    int64_t t0 = clock_mono_ms();
    int rc = d->fn(d->ctx, c->ev, c->payload, &reply, &err);
    r->duration_ms = (long)(clock_mono_ms() - t0);
    take_reply(c, r, rc, reply, &err);
}

static void run_llm(run_ctx *c, const hook_def *d, hook_result *r)
{
    bool prompt = d->type == HOOK_TYPE_PROMPT;
    hook_llm_fn fn = prompt ? c->opts->run_prompt : c->opts->run_agent;
    void *ctx = prompt ? c->opts->prompt_ctx : c->opts->agent_ctx;
    /* Claude Code's placeholder for the hook input; without one the input
     * is appended, so the model always sees what it judges. */
    loom_str text = LOOM_STR_INIT;
    const char *at = strstr(d->prompt, "$ARGUMENTS");
    if (at) {
        const char *p = d->prompt;
        while ((at = strstr(p, "$ARGUMENTS"))) {
            str_append(&text, p, (size_t)(at - p));
            str_puts(&text, c->payload_json);
            p = at + 10;
        }
        str_puts(&text, p);
    } else {
        str_printf(&text, "%s\n\n%s", d->prompt, c->payload_json);
    }
    hook_llm_request req = {
        .type = d->type,
        .event = c->ev,
        .prompt = text.ptr,
        .model = d->model,
        .timeout_ms = timeout_of(c, d),
        .payload = c->payload,
        .config = d->config,
        .cancel = c->opts->cancel,
    };
    json_t *reply = NULL;
    loom_error err;
    loom_error_clear(&err);
    int64_t t0 = clock_mono_ms();
    int rc = fn(ctx, &req, &reply, &err);
    r->duration_ms = (long)(clock_mono_ms() - t0);
    take_reply(c, r, rc, reply, &err);
    str_free(&text);
}

/* ---- the run ------------------------------------------------------------ */

static const char *source_phrase(hook_source s)
{
    switch (s) {
    case HOOK_SRC_USER:
        return "user settings";
    case HOOK_SRC_PROJECT:
        return "project settings";
    case HOOK_SRC_LOCAL:
        return "local project settings";
    case HOOK_SRC_PLUGIN:
        return "plugins";
    case HOOK_SRC_SKILL:
        return "skill frontmatter";
    case HOOK_SRC_AGENT:
        return "agent frontmatter";
    default:
        return "built-ins";
    }
}

static void init_result(hook_result *r, const hook_def *d)
{
    memset(r, 0, sizeof *r);
    r->type = d->type;
    r->source = d->source;
    r->label = hook_def_label(d);
    r->where = xstrdup(d->where);
}

static void report_skipped(run_ctx *c, const hook_plan *plan)
{
    size_t untrusted[HOOK_SRC__COUNT] = {0};
    size_t unrunnable[HOOK_TYPE__COUNT] = {0};
    hook_outcome *o = c->out;
    for (size_t i = 0; i < plan->n_skipped; i++) {
        const hook_def *d = plan->skipped[i];
        hook_result *r = &o->results[o->n_results++];
        init_result(r, d);
        r->status = HOOK_STATUS_SKIPPED;
        if (!d->trusted) {
            untrusted[d->source]++;
            set_message(r, "not trusted");
        } else {
            unrunnable[d->type]++;
            set_message(r, "no runner for this hook type");
        }
    }
    const char *hint = c->opts->trust_hint
                           ? c->opts->trust_hint
                           : "trust this workspace to run them (see \"Trust\" in docs/hooks.md)";
    for (int s = 0; s < HOOK_SRC__COUNT; s++)
        if (untrusted[s])
            notice(c, HOOK_NOTICE_SKIPPED, "skipped %zu %s hook(s) from untrusted %s; %s",
                   untrusted[s], hook_event_name(c->ev), source_phrase((hook_source)s), hint);
    for (int t = 0; t < HOOK_TYPE__COUNT; t++)
        if (unrunnable[t])
            notice(c, HOOK_NOTICE_SKIPPED,
                   "skipped %zu %s hook(s) of type \"%s\": %s",
                   unrunnable[t], hook_event_name(c->ev), hook_type_name((hook_type)t),
                   t == HOOK_TYPE_AGENT
                       ? "agent hooks run only in a session's own runs with sub-agents on "
                         "(not inside a sub-agent)"
                       : "no model is available to judge them here");
}

static void log_result(const run_ctx *c, const hook_result *r)
{
    json_t *f = json_object();
    json_set_str(f, "event", hook_event_name(c->ev));
    json_set_str(f, "hook", r->where);
    json_set_str(f, "status", hook_status_name(r->status));
    json_object_set_new(f, "exit_code", json_integer(r->exit_code));
    json_object_set_new(f, "duration_ms", json_integer(r->duration_ms));
    if (r->verdict != PERM_NONE)
        json_set_str(f, "verdict", perm_verdict_name(r->verdict));
    log_event(LOG_DEBUG, "hooks", f, "hook %s", r->label);
}

static char *take_str(loom_str *s)
{
    return s->len ? str_steal(s) : (str_free(s), (char *)NULL);
}

hook_outcome hooks_run(hook_registry *reg, hook_event ev, const json_t *payload,
                       const hook_run_opts *opts)
{
    static const hook_run_opts no_opts;
    hook_outcome out;
    memset(&out, 0, sizeof out);
    out.event = ev;
    if (!opts)
        opts = &no_opts;
    run_ctx c;
    memset(&c, 0, sizeof c);
    c.out = &out;
    c.ev = ev;
    c.opts = opts;
    c.default_timeout_ms = opts->default_timeout_ms > 0 ? opts->default_timeout_ms
                                                        : HOOK_DEFAULT_TIMEOUT_MS;
    if (!reg || (unsigned)ev >= HOOK_EVENT__COUNT)
        return out;

    /* Step 1, input: the integrator's payload, completed with what every
     * hook may rely on. A shallow copy: only top-level keys are added. */
    if (json_is_object(payload)) {
        c.payload = json_copy((json_t *)payload);
    } else {
        c.payload = json_object();
        if (payload)
            notice(&c, HOOK_NOTICE_WARNING, "%s hook payload is not a JSON object; sent {}",
                   hook_event_name(ev));
    }
    if (!json_is_string(json_object_get(c.payload, "hook_event_name")))
        json_set_str(c.payload, "hook_event_name", hook_event_name(ev));
    char here[PATH_MAX];
    const char *cwd = json_get_str(c.payload, "cwd", NULL);
    if (!cwd || !*cwd) {
        cwd = opts->project_dir ? opts->project_dir : getcwd(here, sizeof here);
        if (cwd)
            json_set_str(c.payload, "cwd", cwd);
        cwd = json_get_str(c.payload, "cwd", NULL);
    }
    c.cwd = cwd;
    /* Step 2, environment: the project directory hooks find scripts by. */
    c.project_dir = opts->project_dir ? opts->project_dir : cwd;

    /* Steps 3-7: match value, built-ins and settings hooks, matcher, `if`,
     * dedupe (registry.c); once-only hooks are claimed there too. */
    bool runnable[HOOK_TYPE__COUNT] = {
        [HOOK_TYPE_COMMAND] = true,
        [HOOK_TYPE_HTTP] = true,
        [HOOK_TYPE_PROMPT] = opts->run_prompt != NULL,
        [HOOK_TYPE_AGENT] = opts->run_agent != NULL,
        [HOOK_TYPE_BUILTIN] = true,
    };
    hook_plan plan;
    hook_registry_plan(reg, ev, c.payload, c.project_dir, runnable, &plan);
    out.results = xcalloc(plan.n_run + plan.n_skipped + 1, sizeof *out.results);
    report_skipped(&c, &plan);

    /* Step 8: execute, in plan order. */
    if (plan.n_run)
        c.payload_json = json_dump_compact(c.payload);
    for (size_t i = 0; i < plan.n_run; i++) {
        if (cancel_requested(opts->cancel)) {
            out.cancelled = true;
            break;
        }
        const hook_def *d = plan.run[i];
        hook_result *r = &out.results[out.n_results++];
        init_result(r, d);
        out.ran++;
        switch (d->type) {
        case HOOK_TYPE_COMMAND:
            run_command(&c, d, r);
            break;
        case HOOK_TYPE_HTTP:
            run_http(&c, d, r);
            break;
        case HOOK_TYPE_PROMPT:
        case HOOK_TYPE_AGENT:
            run_llm(&c, d, r);
            break;
        case HOOK_TYPE_BUILTIN:
            run_builtin(&c, d, r);
            break;
        default:
            break;
        }
        if (r->status == HOOK_STATUS_CANCELLED)
            out.cancelled = true;
        log_result(&c, r);
    }
    hook_plan_free(&plan);

    if (is_permission_event(ev) && out.permission == PERM_DENY) {
        out.blocked = true;
        str_clear(&c.block_reason);
        str_puts(&c.block_reason, str_cstr(&c.perm_reason));
    }
    out.permission_reason = take_str(&c.perm_reason);
    out.block_reason = take_str(&c.block_reason);
    out.additional_context = take_str(&c.context);
    out.stop_reason = take_str(&c.stop_reason);
    free(c.input_from);
    free(c.payload_json);
    free_env(c.envp);
    json_decref(c.payload);
    return out;
}

void hook_outcome_free(hook_outcome *out)
{
    if (!out)
        return;
    free(out->permission_reason);
    free(out->block_reason);
    json_decref(out->updated_input);
    json_decref(out->elicitation);
    free(out->additional_context);
    free(out->stop_reason);
    for (size_t i = 0; i < out->n_notices; i++)
        free(out->notices[i].text);
    free(out->notices);
    for (size_t i = 0; i < out->n_results; i++) {
        free(out->results[i].label);
        free(out->results[i].where);
        free(out->results[i].message);
        free(out->results[i].output);
    }
    free(out->results);
    memset(out, 0, sizeof *out);
}
