/* scenario.c — loads and validates a mockllm scenario file, picks the turn
 * that answers a request from the request's own conversation (or, in
 * sequence mode, from its place in the script), and hands out each turn's
 * scripted faults attempt by attempt. A typo in a scenario must
 * fail loudly at start-up, never as a puzzling test failure later, so every
 * key is checked and every error names the file and the JSON path. */
#include "mockllm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *file;
    char *err;
    size_t errlen;
} vctx;

static int fail(vctx *v, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(vctx *v, const char *where, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(v->err, v->errlen, "scenario %s: %s: %s", v->file, where, msg);
    return -1;
}

/* Rejects keys outside allowed (NULL-terminated) so misspelt options do not
 * silently fall back to defaults. */
static int check_keys(vctx *v, const char *where, const json_t *obj,
                      const char *const *allowed)
{
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        bool ok = false;
        for (const char *const *a = allowed; *a; a++)
            if (!strcmp(key, *a))
                ok = true;
        if (!ok) {
            mbuf list = {0};
            for (const char *const *a = allowed; *a; a++) {
                if (list.len)
                    mbuf_adds(&list, ", ");
                mbuf_adds(&list, *a);
            }
            fail(v, where, "unknown key \"%s\" (allowed: %s)", key,
                 list.p ? list.p : "none");
            free(list.p);
            return -1;
        }
    }
    return 0;
}

/* Reads an optional integer >= min into *out; absent keeps *out. */
static int get_int(vctx *v, const char *where, const json_t *obj,
                   const char *key, long min, long *out)
{
    json_t *j = json_object_get(obj, key);
    if (!j)
        return 0;
    if (!json_is_integer(j) || json_integer_value(j) < min)
        return fail(v, where, "\"%s\" must be an integer >= %ld", key, min);
    *out = (long)json_integer_value(j);
    return 0;
}

/* Reads an optional boolean; absent keeps *out. */
static int get_bool(vctx *v, const char *where, const json_t *obj,
                    const char *key, bool *out)
{
    json_t *j = json_object_get(obj, key);
    if (!j)
        return 0;
    if (!json_is_boolean(j))
        return fail(v, where, "\"%s\" must be true or false", key);
    *out = json_is_true(j);
    return 0;
}

static int get_str(vctx *v, const char *where, const json_t *obj,
                   const char *key, const char **out)
{
    json_t *j = json_object_get(obj, key);
    if (!j)
        return 0;
    if (!json_is_string(j))
        return fail(v, where, "\"%s\" must be a string", key);
    *out = json_string_value(j);
    return 0;
}

static int parse_match(vctx *v, const char *where, const json_t *m, mock_turn *t)
{
    static const char *const keys[] = {"assistant_turns", "tool_results",
                                       "last_user_contains", "system_contains",
                                       "no_tools", "body_contains", NULL};
    if (!json_is_object(m))
        return fail(v, where, "must be an object");
    if (check_keys(v, where, m, keys) ||
        get_int(v, where, m, "assistant_turns", 0, &t->m_assistant_turns) ||
        get_int(v, where, m, "tool_results", 0, &t->m_tool_results) ||
        get_str(v, where, m, "last_user_contains", &t->m_last_user) ||
        get_str(v, where, m, "system_contains", &t->m_system) ||
        get_str(v, where, m, "body_contains", &t->m_body))
        return -1;
    if (t->m_body && !*t->m_body)
        return fail(v, where, "\"body_contains\" must not be empty");
    if (json_object_get(m, "no_tools")) {
        bool no_tools = false;
        if (get_bool(v, where, m, "no_tools", &no_tools))
            return -1;
        t->m_no_tools = no_tools ? 1 : 0;
    }
    return 0;
}

/* Compiles every "$match:" / "$last:" string inside j (object values and
 * array elements, at any depth) into r's templates; *found tells whether
 * there was one. A bad regex fails with the path of its string. */
static int collect_templates(vctx *v, const char *where, json_t *j, mock_reply *r,
                             bool *found)
{
    if (json_is_string(j)) {
        if (!template_is(json_string_value(j)))
            return 0;
        char msg[400];
        *found = true;
        if (template_add(r, json_string_value(j), msg, sizeof msg))
            return fail(v, where, "%s", msg);
        return 0;
    }
    int rc = 0;
    if (json_is_object(j)) {
        const char *key;
        json_t *val;
        json_object_foreach(j, key, val) {
            char *sub = xprintf("%s.%s", where, key);
            rc = collect_templates(v, sub, val, r, found);
            free(sub);
            if (rc)
                break;
        }
    } else if (json_is_array(j)) {
        size_t i;
        json_t *val;
        json_array_foreach(j, i, val) {
            char *sub = xprintf("%s[%zu]", where, i);
            rc = collect_templates(v, sub, val, r, found);
            free(sub);
            if (rc)
                break;
        }
    }
    return rc;
}

static int parse_tool_call(vctx *v, const char *where, const json_t *c,
                           mock_tool_call *out, mock_reply *rep)
{
    static const char *const keys[] = {"id", "name", "input", NULL};
    if (!json_is_object(c))
        return fail(v, where, "must be an object");
    if (check_keys(v, where, c, keys) || get_str(v, where, c, "id", &out->id) ||
        get_str(v, where, c, "name", &out->name))
        return -1;
    if (!out->name || !*out->name)
        return fail(v, where, "\"name\" is required and must be a non-empty string");
    json_t *in = json_object_get(c, "input");
    if (!in) {
        /* Absent input means a tool called with no arguments. */
        json_object_set_new((json_t *)c, "input", json_object());
        in = json_object_get(c, "input");
    }
    if (json_is_object(in)) {
        out->input = in;
        out->arguments = json_dumps(in, JSON_COMPACT);
        if (!out->arguments)
            return fail(v, where, "\"input\" could not be serialised");
        /* Templates only in an object input: a raw string is sent verbatim. */
        char *sub = xprintf("%s.input", where);
        int rc = collect_templates(v, sub, in, rep, &out->templated);
        free(sub);
        if (rc)
            return -1;
    } else if (json_is_string(in)) {
        /* A string is sent verbatim as the arguments text, which lets a test
         * script arguments that are not valid JSON. */
        out->arguments = xstrdup(json_string_value(in));
        json_error_t e;
        json_t *parsed = json_loads(out->arguments, 0, &e);
        if (json_is_object(parsed)) {
            json_object_set_new((json_t *)c, "_parsed_input", parsed);
            out->input = json_object_get(c, "_parsed_input");
        } else {
            json_decref(parsed);
        }
    } else {
        return fail(v, where, "\"input\" must be an object (or a string of raw arguments)");
    }
    return 0;
}

static int parse_usage(vctx *v, const char *where, const json_t *u)
{
    static const char *const keys[] = {"input_tokens", "output_tokens",
                                       "cache_read_input_tokens",
                                       "cache_creation_input_tokens",
                                       "cache_creation_1h_input_tokens",
                                       "reasoning_tokens", NULL};
    if (!json_is_object(u))
        return fail(v, where, "must be an object");
    if (check_keys(v, where, u, keys))
        return -1;
    for (const char *const *k = keys; *k; k++) {
        long dummy;
        if (get_int(v, where, u, *k, 0, &dummy))
            return -1;
    }
    return 0;
}

static int parse_reply(vctx *v, const char *where, const json_t *r, mock_reply *out)
{
    static const char *const keys[] = {"text", "thinking", "thinking_signature",
                                       "tool_calls", "text_after", "stop_reason",
                                       "usage", NULL};
    static const char *const stops[] = {"end_turn", "tool_use", "max_tokens",
                                        "stop_sequence", "pause_turn", "refusal",
                                        NULL};
    char sub[160];
    if (!json_is_object(r))
        return fail(v, where, "must be an object");
    if (check_keys(v, where, r, keys) || get_str(v, where, r, "text", &out->text) ||
        get_str(v, where, r, "thinking", &out->thinking) ||
        get_str(v, where, r, "thinking_signature", &out->signature) ||
        get_str(v, where, r, "text_after", &out->text_after) ||
        get_str(v, where, r, "stop_reason", &out->stop_reason))
        return -1;
    if (template_is(out->text)) {
        char msg[400];
        snprintf(sub, sizeof sub, "%s.text", where);
        if (template_add(out, out->text, msg, sizeof msg))
            return fail(v, sub, "%s", msg);
        out->text_templated = true;
    }
    if (out->thinking && !out->signature)
        out->signature = "c2lnX21vY2tfdGhpbmtpbmc="; /* Anthropic always signs thinking */
    json_t *calls = json_object_get(r, "tool_calls");
    if (calls && !json_is_array(calls))
        return fail(v, where, "\"tool_calls\" must be an array");
    out->n_calls = json_array_size(calls);
    out->calls = xcalloc(out->n_calls ? out->n_calls : 1, sizeof *out->calls);
    for (size_t i = 0; i < out->n_calls; i++) {
        snprintf(sub, sizeof sub, "%s.tool_calls[%zu]", where, i);
        if (parse_tool_call(v, sub, json_array_get(calls, i), &out->calls[i], out))
            return -1;
    }
    if (out->stop_reason) {
        bool ok = false;
        for (const char *const *s = stops; *s; s++)
            if (!strcmp(out->stop_reason, *s))
                ok = true;
        if (!ok)
            return fail(v, where,
                        "\"stop_reason\" \"%s\" is not one of end_turn, tool_use, "
                        "max_tokens, stop_sequence, pause_turn, refusal",
                        out->stop_reason);
    } else {
        out->stop_reason = out->n_calls ? "tool_use" : "end_turn";
    }
    json_t *u = json_object_get(r, "usage");
    if (u) {
        snprintf(sub, sizeof sub, "%s.usage", where);
        if (parse_usage(v, sub, u))
            return -1;
        out->usage = u;
    }
    return 0;
}

static bool header_token_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s <= ' ' || *s == ':' || (unsigned char)*s >= 0x7F)
            return false;
    return true;
}

static int parse_fault(vctx *v, const char *where, const json_t *f, mock_fault *out)
{
    static const char *const keys[] = {"status", "headers", "body",
                                       "drop_after_bytes", "malformed", "stall_ms",
                                       "ping_every_ms", "unterminated_end", "after_events",
                                       "times", "comment", NULL};
    if (!json_is_object(f))
        return fail(v, where, "must be an object");
    if (check_keys(v, where, f, keys))
        return -1;
    int kinds = 0;
    static const char *const kind_keys[] = {"status", "drop_after_bytes", "malformed",
                                            "stall_ms", "ping_every_ms", "unterminated_end"};
    for (size_t i = 0; i < sizeof kind_keys / sizeof kind_keys[0]; i++)
        if (json_object_get(f, kind_keys[i]))
            kinds++;
    if (kinds != 1)
        return fail(v, where, "a fault needs exactly one of \"status\", "
                              "\"drop_after_bytes\", \"malformed\", \"stall_ms\", "
                              "\"ping_every_ms\", \"unterminated_end\"");
    out->times = 1;
    if (get_int(v, where, f, "times", 1, &out->times) ||
        get_int(v, where, f, "after_events", 0, &out->after_events))
        return -1;
    bool has_after = json_object_get(f, "after_events") != NULL;
    bool status_only = json_object_get(f, "headers") || json_object_get(f, "body");

    if (json_object_get(f, "status")) {
        long st = 0;
        if (get_int(v, where, f, "status", 100, &st))
            return -1;
        if (st > 599)
            return fail(v, where, "\"status\" must be an HTTP status 100..599");
        if (has_after)
            return fail(v, where, "\"after_events\" does not apply to a status fault");
        out->kind = FAULT_STATUS;
        out->status = (int)st;
        const json_t *h = json_object_get(f, "headers");
        if (h) {
            if (!json_is_object(h))
                return fail(v, where, "\"headers\" must be an object of name: string");
            const char *name;
            json_t *val;
            json_object_foreach((json_t *)h, name, val) {
                if (!header_token_ok(name))
                    return fail(v, where, "header name \"%s\" is not a valid HTTP token", name);
                if (!json_is_string(val))
                    return fail(v, where, "header \"%s\" must have a string value", name);
                if (strpbrk(json_string_value(val), "\r\n"))
                    return fail(v, where, "header \"%s\" value contains a line break", name);
            }
            out->headers = h;
        }
        out->body = json_object_get(f, "body");
        snprintf(out->desc, sizeof out->desc, "status %d", out->status);
        return 0;
    }
    if (status_only)
        return fail(v, where, "\"headers\" and \"body\" only apply to a status fault");
    if (json_object_get(f, "drop_after_bytes")) {
        if (has_after)
            return fail(v, where, "\"after_events\" does not apply to drop_after_bytes");
        out->kind = FAULT_DROP;
        if (get_int(v, where, f, "drop_after_bytes", 0, &out->drop_after_bytes))
            return -1;
        snprintf(out->desc, sizeof out->desc, "drop_after_bytes %ld", out->drop_after_bytes);
    } else if (json_object_get(f, "malformed")) {
        out->kind = FAULT_MALFORMED;
        if (get_str(v, where, f, "malformed", &out->malformed))
            return -1;
        snprintf(out->desc, sizeof out->desc, "malformed after %ld events",
                 out->after_events);
    } else if (json_object_get(f, "unterminated_end")) {
        if (has_after)
            return fail(v, where, "\"after_events\" does not apply to unterminated_end");
        if (!json_is_true(json_object_get(f, "unterminated_end")))
            return fail(v, where, "\"unterminated_end\" must be true");
        out->kind = FAULT_UNTERMINATED;
        snprintf(out->desc, sizeof out->desc, "unterminated_end");
    } else if (json_object_get(f, "ping_every_ms")) {
        out->kind = FAULT_PING;
        if (get_int(v, where, f, "ping_every_ms", 1, &out->ping_every_ms))
            return -1;
        out->ping_text = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
        snprintf(out->desc, sizeof out->desc, "ping every %ldms after %ld events",
                 out->ping_every_ms, out->after_events);
    } else {
        out->kind = FAULT_STALL;
        if (get_int(v, where, f, "stall_ms", 0, &out->stall_ms))
            return -1;
        snprintf(out->desc, sizeof out->desc, "stall %ldms after %ld events",
                 out->stall_ms, out->after_events);
    }
    return 0;
}

static int parse_turn(vctx *v, size_t idx, const json_t *t, mock_turn *out,
                      long *positional, bool sequence)
{
    static const char *const keys[] = {"match", "reply", "chunk_size", "drip_ms",
                                       "faults", "repeat", "whole_items", "comment", NULL};
    char where[64], sub[96];
    snprintf(where, sizeof where, "turns[%zu]", idx);
    out->m_assistant_turns = out->m_tool_results = -1;
    out->m_no_tools = -1;
    out->chunk_size = 8;
    out->repeat = 1;
    if (!json_is_object(t))
        return fail(v, where, "must be an object");
    if (check_keys(v, where, t, keys))
        return -1;
    const json_t *m = json_object_get(t, "match");
    if (m) {
        snprintf(sub, sizeof sub, "%s.match", where);
        if (parse_match(v, sub, m, out))
            return -1;
        out->has_match = true;
        out->positional = -1;
    } else {
        out->positional = (*positional)++;
    }
    if (json_object_get(t, "repeat")) {
        if (!sequence)
            return fail(v, where, "\"repeat\" needs \"sequence\": true at the top level");
        if (m)
            return fail(v, where, "\"repeat\" only applies to a turn without \"match\"");
        if (get_int(v, where, t, "repeat", 1, &out->repeat))
            return -1;
    }
    long chunk = 8;
    if (get_int(v, where, t, "chunk_size", 1, &chunk) ||
        get_int(v, where, t, "drip_ms", 0, &out->drip_ms) ||
        get_bool(v, where, t, "whole_items", &out->whole_items))
        return -1;
    out->chunk_size = (size_t)chunk;

    const json_t *r = json_object_get(t, "reply");
    json_t *empty = NULL;
    if (!r) /* a turn may script only faults; its final answer is empty text */
        r = empty = json_object();
    snprintf(sub, sizeof sub, "%s.reply", where);
    int rc = parse_reply(v, sub, r, &out->reply);
    if (empty) {
        /* Keep the placeholder alive: reply fields borrow from it. */
        json_object_set_new((json_t *)t, "reply", empty);
    }
    if (rc)
        return -1;

    const json_t *faults = json_object_get(t, "faults");
    if (faults && !json_is_array(faults))
        return fail(v, where, "\"faults\" must be an array");
    out->n_faults = json_array_size(faults);
    out->faults = xcalloc(out->n_faults ? out->n_faults : 1, sizeof *out->faults);
    for (size_t i = 0; i < out->n_faults; i++) {
        snprintf(sub, sizeof sub, "%s.faults[%zu]", where, i);
        if (parse_fault(v, sub, json_array_get(faults, i), &out->faults[i]))
            return -1;
    }
    return 0;
}

int scenario_load(const char *path, mock_scenario *sc, char *err, size_t errlen)
{
    vctx v = {path, err, errlen};
    memset(sc, 0, sizeof *sc);
    json_error_t je;
    sc->root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!sc->root) {
        if (je.line > 0)
            snprintf(err, errlen, "scenario %s: line %d column %d: %s", path, je.line,
                     je.column, je.text);
        else /* could not read it at all; je.text says why */
            snprintf(err, errlen, "scenario %s: %s", path, je.text);
        return -1;
    }
    static const char *const keys[] = {"turns", "sequence", "context_window",
                                       "comment", NULL};
    if (!json_is_object(sc->root)) {
        fail(&v, "top level", "must be an object with a \"turns\" array");
        goto bad;
    }
    if (check_keys(&v, "top level", sc->root, keys) ||
        get_bool(&v, "top level", sc->root, "sequence", &sc->sequence) ||
        get_int(&v, "top level", sc->root, "context_window", 1, &sc->context_window))
        goto bad;
    json_t *turns = json_object_get(sc->root, "turns");
    if (!json_is_array(turns) || json_array_size(turns) == 0) {
        fail(&v, "turns", "must be a non-empty array");
        goto bad;
    }
    sc->n_turns = json_array_size(turns);
    sc->turns = xcalloc(sc->n_turns, sizeof *sc->turns);
    long positional = 0;
    for (size_t i = 0; i < sc->n_turns; i++)
        if (parse_turn(&v, i, json_array_get(turns, i), &sc->turns[i], &positional,
                       sc->sequence))
            goto bad;
    sc->n_positional = positional;
    pthread_mutex_init(&sc->mu, NULL);
    return 0;
bad:
    scenario_free(sc);
    return -1;
}

void scenario_free(mock_scenario *sc)
{
    for (size_t i = 0; i < sc->n_turns; i++) {
        mock_reply *r = &sc->turns[i].reply;
        for (size_t c = 0; r->calls && c < r->n_calls; c++)
            free(r->calls[c].arguments);
        free(r->calls);
        template_free(r);
        free(sc->turns[i].faults);
    }
    free(sc->turns);
    json_decref(sc->root);
    memset(sc, 0, sizeof *sc);
}

static bool turn_matches(const mock_turn *t, const mock_conv *c)
{
    if (t->m_assistant_turns >= 0 && t->m_assistant_turns != c->assistant_turns)
        return false;
    if (t->m_tool_results >= 0 && t->m_tool_results != c->tool_results)
        return false;
    if (t->m_last_user && !strstr(c->last_user ? c->last_user : "", t->m_last_user))
        return false;
    if (t->m_system && !strstr(c->system ? c->system : "", t->m_system))
        return false;
    if (t->m_no_tools >= 0 && t->m_no_tools != (c->tools == 0))
        return false;
    /* The raw JSON text as sent, escapes and all: a fork's system prompt is
     * its parent's byte for byte, so only the body tells them apart. */
    if (t->m_body && (!c->body || !memmem(c->body, c->body_len, t->m_body,
                                          strlen(t->m_body))))
        return false;
    return true;
}

/* The fault attempt number `attempt` of t must suffer, or NULL. */
static const mock_fault *fault_for(const mock_turn *t, long attempt)
{
    long k = attempt;
    for (size_t i = 0; i < t->n_faults; i++) {
        if (k <= t->faults[i].times)
            return &t->faults[i];
        k -= t->faults[i].times;
    }
    return NULL;
}

static long positional_turn(const mock_scenario *sc, long pos)
{
    for (size_t i = 0; i < sc->n_turns; i++)
        if (!sc->turns[i].has_match && sc->turns[i].positional == pos)
            return (long)i;
    return -1;
}

long scenario_pick(mock_scenario *sc, const mock_conv *conv, long *attempt,
                   const mock_fault **fault, long *seq)
{
    long turn = -1;
    *attempt = 0;
    *fault = NULL;
    *seq = -1;
    pthread_mutex_lock(&sc->mu);
    /* Explicit matches first, so a side request (a summary, a title) can be
     * answered without disturbing the positional script. */
    for (size_t i = 0; i < sc->n_turns && turn < 0; i++)
        if (sc->turns[i].has_match && turn_matches(&sc->turns[i], conv))
            turn = (long)i;
    if (turn < 0 && sc->sequence) {
        /* Past the end nothing answers, so a script that ran out shows up as
         * the usual "no turn matched" error rather than a silent repeat. */
        if (sc->seq_pos < sc->n_positional) {
            turn = positional_turn(sc, sc->seq_pos);
            *seq = sc->seq_pos;
        }
    } else if (turn < 0) {
        turn = positional_turn(sc, conv->assistant_turns);
    }
    if (turn >= 0) {
        mock_turn *t = &sc->turns[turn];
        *attempt = ++t->attempts;
        *fault = fault_for(t, *attempt);
        /* Only a clean answer moves the sequence on: a retry after a fault
         * gets the same turn's next attempt. */
        if (*seq >= 0 && !*fault && ++t->served >= t->repeat)
            sc->seq_pos++;
    }
    pthread_mutex_unlock(&sc->mu);
    return turn;
}

/* Appends s to b as a JSON-ish quoted string, cut to max bytes. */
static void add_quoted(mbuf *b, const char *s, size_t max)
{
    size_t n = strlen(s);
    mbuf_adds(b, "\"");
    size_t cut = n > max ? utf8_piece_len(s, n, max) : n;
    for (size_t i = 0; i < cut; i++) {
        if (s[i] == '\n')
            mbuf_adds(b, "\\n");
        else if (s[i] == '"')
            mbuf_adds(b, "\\\"");
        else
            mbuf_add(b, &s[i], 1);
    }
    mbuf_adds(b, cut < n ? "\"…" : "\"");
}

char *scenario_describe_miss(mock_scenario *sc, const mock_conv *conv)
{
    mbuf b = {0};
    char num[256];
    snprintf(num, sizeof num,
             "mockllm: no scripted turn matched this request "
             "(assistant_turns=%ld, tool_results=%ld, tools=%ld, last_user=",
             conv->assistant_turns, conv->tool_results, conv->tools);
    mbuf_adds(&b, num);
    add_quoted(&b, conv->last_user ? conv->last_user : "", 80);
    mbuf_adds(&b, ", system=");
    add_quoted(&b, conv->system ? conv->system : "", 80);
    long positional = 0, matched = 0;
    for (size_t i = 0; i < sc->n_turns; i++) {
        if (sc->turns[i].has_match)
            matched++;
        else
            positional++;
    }
    if (positional && sc->sequence) {
        pthread_mutex_lock(&sc->mu);
        long used = sc->seq_pos;
        pthread_mutex_unlock(&sc->mu);
        snprintf(num, sizeof num,
                 "); the scenario has %zu turns: %ld with a match object, %ld "
                 "in the sequence, %ld of them used up%s",
                 sc->n_turns, matched, positional, used,
                 used >= positional ? " (the script ran out)" : "");
    } else if (positional)
        snprintf(num, sizeof num,
                 "); the scenario has %zu turns: %ld with a match object, %ld "
                 "positional (answering assistant_turns 0..%ld)",
                 sc->n_turns, matched, positional, positional - 1);
    else
        snprintf(num, sizeof num,
                 "); the scenario has %zu turns, all with match objects",
                 sc->n_turns);
    mbuf_adds(&b, num);
    return b.p;
}
