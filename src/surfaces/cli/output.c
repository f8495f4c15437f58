/* output.c — rendering a headless run: text mode, and the dispatch of an
 * event to the other formats (output_stream_json.c, output_result.c).
 *
 * Text mode's contract (docs/cli.md): stdout holds every model reply's text
 * exactly once, whatever retries or fallbacks happened. Reply text reaches
 * stdout only through text_put. Off a terminal a call's text is held in
 * o->held until model.completed says the call succeeded; stream.restarted
 * throws it away, and a run that ends with a call unfinished prints none of
 * that call.
 *
 * Text mode prints nothing from outside raw: the model's text, warnings,
 * error messages and names pass through base/termsafe.h, so escape
 * sequences in them show as "^[…" instead of reaching the terminal (or
 * the terminal a script's log is later shown on). The JSON formats need
 * no such step: JSON escapes every control character itself. Called on the
 * run's threads, serialized by loom. */
#include "surfaces/cli/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/str.h"
#include "base/termsafe.h"
#include "surfaces/cli/agent_tree.h"

void output_begin(cli_output *o)
{
    o->started_ms = clock_mono_ms();
    o->api_since = o->started_ms;
    o->api_ms = 0;
    o->at_line_start = true;
    o->live = o->format == OUTPUT_TEXT && isatty(STDOUT_FILENO);
    str_free(&o->held); /* a zeroed cli_output holds nothing to free */
    o->held = (loom_str)LOOM_STR_INIT;
    o->turn_has_text = false;
    json_decref(o->calls);
    json_decref(o->denials);
    o->calls = o->denials = NULL;
}

void output_free(cli_output *o)
{
    str_free(&o->held);
    json_decref(o->calls);
    json_decref(o->denials);
    json_decref(o->tools);
    json_decref(o->mcp_servers);
    free(o->session_id);
    free(o->cwd);
    free(o->permission_mode);
    free(o->message_id);
    o->calls = o->denials = o->tools = o->mcp_servers = NULL;
    o->session_id = o->cwd = o->permission_mode = o->message_id = NULL;
}

static void set_str(char **dst, const char *v)
{
    if (!v)
        return;
    free(*dst);
    *dst = xstrdup(v);
}

/* The one place a reply's text is written to stdout, made terminal-safe;
 * a character cut between two deltas waits in o->text_safe. */
static void text_put(cli_output *o, const char *s, size_t n)
{
    if (!n)
        return;
    loom_str out = LOOM_STR_INIT;
    termsafe_feed(&o->text_safe, s, n, &out);
    if (out.len) {
        fwrite(out.ptr, 1, out.len, stdout);
        fflush(stdout);
        o->at_line_start = out.ptr[out.len - 1] == '\n';
    }
    str_free(&out);
}

/* The model call succeeded: what it said is now the reply. */
static void text_release(cli_output *o)
{
    text_put(o, o->held.ptr, o->held.len);
    str_clear(&o->held);
}

/* The text of a turn is over: what the stream holds back is printed. */
static void text_flush(cli_output *o)
{
    loom_str out = LOOM_STR_INIT;
    termsafe_finish(&o->text_safe, &out);
    if (out.len) {
        fwrite(out.ptr, 1, out.len, stdout);
        fflush(stdout);
        o->at_line_start = out.ptr[out.len - 1] == '\n';
    }
    str_free(&out);
}

static void text_newline(cli_output *o)
{
    text_flush(o);
    if (!o->at_line_start) {
        fputc('\n', stdout);
        fflush(stdout);
        o->at_line_start = true;
    }
}

/* A string from outside (a file name, a server's message) on stderr, every
 * control character visible; a newline in it would start a line that
 * looks like Loom's own, so it shows as "^J". */
static void put_clean(const char *s)
{
    loom_str out = LOOM_STR_INIT;
    termsafe_append(&out, s, strlen(s));
    for (size_t i = 0; i < out.len; i++) {
        if (out.ptr[i] == '\n')
            fputs("^J", stderr);
        else
            fputc(out.ptr[i], stderr);
    }
    str_free(&out);
}

/* heartbeat.event (docs/heartbeat.md), one line like a warning:
 * "loom: event high filesystem: src/a.c modified (…) (ev_0193…)". */
static void heartbeat_line(const json_t *payload)
{
    fputs("loom: event ", stderr);
    put_clean(json_get_str(payload, "urgency", "?"));
    fputc(' ', stderr);
    put_clean(json_get_str(payload, "source", "?"));
    fputs(": ", stderr);
    put_clean(json_get_str(payload, "summary", ""));
    fputs(" (", stderr);
    put_clean(json_get_str(payload, "event_id", ""));
    fputs(")\n", stderr);
}

/* agent.completed, verbose: "loom: agent ✓ reviewer (code-reviewer)
 * completed · 3 tool uses · 12.3k tokens · 8.1s". */
static void agent_line(const json_t *payload)
{
    loom_str line = LOOM_STR_INIT;
    agent_tree_completed(NULL, payload, &line);
    fputs("loom: agent ", stderr);
    put_clean(str_cstr(&line));
    fputc('\n', stderr);
    str_free(&line);
}

/* An event a sub-agent's run forwarded (agent_id in its payload): its
 * text and model calls are not the reply; verbose shows its tool calls. */
static void agent_event(cli_output *o, loom_event_type type, const json_t *payload)
{
    if (type == LOOM_EV_WARNING_EMITTED) {
        text_newline(o);
        fputs("loom: warning: [agent ", stderr);
        put_clean(json_get_str(payload, "agent_name", json_get_str(payload, "agent_id", "?")));
        fputs("] ", stderr);
        put_clean(json_get_str(payload, "message", ""));
        fputc('\n', stderr);
        return;
    }
    if (!o->verbose || (type != LOOM_EV_TOOL_FINISHED && type != LOOM_EV_TOOL_FAILED))
        return;
    fputs("loom: [agent ", stderr);
    put_clean(json_get_str(payload, "agent_name", json_get_str(payload, "agent_id", "?")));
    fputs("] ", stderr);
    put_clean(json_get_str(payload, "tool", "?"));
    fprintf(stderr, " %s (%lld ms)\n", type == LOOM_EV_TOOL_FAILED ? "failed" : "done",
            (long long)json_get_int(payload, "duration_ms", 0));
}

static void text_event(cli_output *o, loom_event_type type, const json_t *payload)
{
    if (type == LOOM_EV_MODEL_COMPLETED) {
        text_release(o);
        /* Text of one turn, then tools, then more text: keep turns on their own lines. */
        if (o->turn_has_text)
            text_newline(o);
        o->turn_has_text = false;
    } else if (type == LOOM_EV_STREAM_RESTARTED) {
        /* The call starts over: its text so far is void. On a terminal it
         * was shown already; the retry starts on a line of its own. */
        str_clear(&o->held);
        text_newline(o);
        o->turn_has_text = false;
    } else if (type == LOOM_EV_WARNING_EMITTED) {
        const char *kind = json_get_str(payload, "kind", "");
        if (!strcmp(kind, "model_retry")) {
            text_newline(o);
            fputs("loom: warning: ", stderr);
            put_clean(json_get_str(payload, "code", ""));
            fputs(": ", stderr);
            put_clean(json_get_str(payload, "message", ""));
            fprintf(stderr, "; retry %lld in %.1fs%s\n",
                    (long long)json_get_int(payload, "attempt", 0),
                    json_get_num(payload, "delay_s", 0),
                    o->turn_has_text ? " (the reply starts over)" : "");
            o->turn_has_text = false;
        } else {
            text_newline(o);
            fputs("loom: warning: ", stderr);
            put_clean(json_get_str(payload, "message", ""));
            fputc('\n', stderr);
        }
    } else if (type == LOOM_EV_HEARTBEAT_EVENT) {
        heartbeat_line(payload);
    } else if (o->verbose && type == LOOM_EV_HOOK_OUTPUT) {
        /* A hook's stdout (never one that answered suppressOutput). */
        fputs("loom: hook ", stderr);
        put_clean(json_get_str(payload, "hook", "?")); /* a settings file's name for it */
        fputs(" (", stderr);
        put_clean(json_get_str(payload, "event", "?"));
        fputs("): ", stderr);
        put_clean(json_get_str(payload, "output", ""));
        fputc('\n', stderr);
    } else if (o->verbose && type == LOOM_EV_AGENT_COMPLETED) {
        text_newline(o);
        agent_line(payload);
    } else if (o->verbose && (type == LOOM_EV_TOOL_FINISHED || type == LOOM_EV_TOOL_FAILED)) {
        fputs("loom: ", stderr);
        put_clean(json_get_str(payload, "tool", "?"));
        fprintf(stderr, " %s (%lld ms)\n", type == LOOM_EV_TOOL_FAILED ? "failed" : "done",
                (long long)json_get_int(payload, "duration_ms", 0));
    }
}

/* "loom: denied Bash(rm -rf x): <the rule or mode that denied it>". */
static void denial_line(cli_output *o, const json_t *payload, const char *reason)
{
    const json_t *call = o->calls ? json_object_get(o->calls, json_get_str(payload, "call_id", ""))
                                  : NULL;
    char *label = output_call_label(json_get_str(payload, "tool", "?"),
                                    call ? json_object_get(call, "input") : NULL);
    /* The reason speaks to the model too ("… Do not retry the same call");
     * the person reads what denied it: its first sentence, without the
     * "denied by" the line already says. */
    if (!strncmp(reason, "denied by ", 10))
        reason += 10;
    const char *end = strstr(reason, ". ");
    char *first = end ? strndup(reason, (size_t)(end - reason)) : strdup(reason);
    text_newline(o);
    fputs("loom: denied ", stderr);
    put_clean(label);
    fputs(": ", stderr);
    put_clean(first ? first : reason);
    fputc('\n', stderr);
    free(first);
    free(label);
}

/* What every format but events keeps of the run's own (not a sub-agent's)
 * events: its session, its tool calls and denials, its time in model calls. */
static void track(cli_output *o, loom_event_type type, const json_t *payload)
{
    if (type == LOOM_EV_RUN_STATE_CHANGED &&
        !strcmp(json_get_str(payload, "state", ""), "running")) {
        set_str(&o->session_id, json_get_str(payload, "session_id", NULL));
        set_str(&o->cwd, json_get_str(payload, "cwd", NULL));
        set_str(&o->permission_mode, json_get_str(payload, "permission_mode", NULL));
        o->api_since = clock_mono_ms();
    } else if (type == LOOM_EV_MODEL_COMPLETED) {
        long long now = clock_mono_ms();
        o->api_ms += now - o->api_since;
        o->api_since = now;
    } else if (type == LOOM_EV_TOOL_STARTED) {
        output_note_call(o, payload);
    } else if (type == LOOM_EV_TOOL_FINISHED || type == LOOM_EV_TOOL_FAILED) {
        /* The next model call starts when the last tool of the turn is done. */
        o->api_since = clock_mono_ms();
        const char *reason = type == LOOM_EV_TOOL_FAILED ? output_note_denial(o, payload) : NULL;
        if (reason && o->format == OUTPUT_TEXT)
            denial_line(o, payload, reason);
    }
}

void output_event(cli_output *o, const loom_event *ev)
{
    if (o->format == OUTPUT_EVENTS) {
        /* The final event carries the result; output_end prints it. */
        fputs(ev->json, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        return;
    }
    if (ev->text) {
        /* The hot path: no JSON to parse for a token. A sub-agent's text
         * is its own, not the reply (its result reaches the parent). */
        if ((o->format == OUTPUT_TEXT || o->format == OUTPUT_STREAM_JSON) &&
            !strcmp(ev->channel, "text") && *ev->text && !agent_tree_token_from_agent(ev)) {
            size_t n = strlen(ev->text);
            if (o->live)
                text_put(o, ev->text, n);
            else
                str_append(&o->held, ev->text, n);
            o->turn_has_text = true;
        }
        return;
    }
    loom_error ignore;
    json_t *doc = json_parse(ev->json, strlen(ev->json), "event", &ignore);
    const json_t *payload = json_get_obj(doc, "payload");
    bool from_agent = agent_tree_event_agent(ev, doc);
    if (!from_agent)
        track(o, ev->kind, payload);
    if (o->format == OUTPUT_STREAM_JSON && !from_agent)
        output_stream_json_event(o, ev, doc);
    /* json and stream-json keep stdout for their JSON, but warnings and
     * the heartbeat's events still belong on stderr. */
    if (o->format != OUTPUT_TEXT && ev->kind != LOOM_EV_WARNING_EMITTED &&
        ev->kind != LOOM_EV_HEARTBEAT_EVENT) {
        json_decref(doc);
        return;
    }
    if (from_agent)
        agent_event(o, ev->kind, payload);
    else
        text_event(o, ev->kind, payload);
    json_decref(doc);
}

void output_warning(cli_output *o, const char *message)
{
    (void)o;
    fputs("loom: warning: ", stderr);
    put_clean(message);
    fputc('\n', stderr);
}

void output_end(cli_output *o, const loom_run *run)
{
    const char *result_json = loom_run_result_json(run);
    loom_error ignore;
    json_t *res = json_parse(result_json, strlen(result_json), "result", &ignore);
    const json_t *error = json_get_obj(res, "error");
    if (o->held.len && o->format == OUTPUT_TEXT)
        fprintf(stderr, "loom: the model call was cut off; its %zu bytes of unfinished reply "
                        "are not printed\n", o->held.len);
    str_clear(&o->held);
    if (o->format == OUTPUT_TEXT)
        text_newline(o);
    if (error) {
        fputs("loom: error: ", stderr);
        put_clean(json_get_str(error, "message", ""));
        fputs(" [", stderr);
        put_clean(json_get_str(error, "code", ""));
        fputs("]\n", stderr);
    }
    if (o->format == OUTPUT_JSON) {
        json_t *out = output_result_object(o, run, res);
        char *s = json_dumps(out, JSON_INDENT(2));
        printf("%s\n", s);
        free(s);
        json_decref(out);
    } else if (o->format == OUTPUT_STREAM_JSON) {
        output_stream_json_line(output_result_object(o, run, res));
    }
    fflush(stdout);
    json_decref(res);
}

void output_setup_error(cli_output *o, const loom_status *st)
{
    fputs("loom: ", stderr);
    put_clean(st->message);
    fputc('\n', stderr);
    if (o->format == OUTPUT_JSON || o->format == OUTPUT_STREAM_JSON) {
        json_t *res = json_pack("{s:s,s:{s:s,s:s}}", "result", "", "error", "code",
                                st->code_name, "message", st->message);
        json_t *out = output_result_object(o, NULL, res);
        char *s = json_dumps(out, o->format == OUTPUT_JSON ? JSON_INDENT(2) : JSON_COMPACT);
        printf("%s\n", s);
        free(s);
        json_decref(out);
        json_decref(res);
    }
}
