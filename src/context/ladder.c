/* ladder.c — the local compaction steps (snip, micro, collapse) and the
 * view of a session through the edits they recorded. See ladder.h. */
#include "context/ladder.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "context/tokens.h"
#include "session/record.h"

/* What a cleared tool result says instead; the model can re-run the call. */
#define MICRO_MARKER "[Old tool result cleared to save context"

void ladder_config_default(ladder_config *c)
{
    c->snip = 0.50;
    c->micro = 0.60;
    c->collapse = 0.70;
    c->compact = 0.80;
    c->keep_results = 3;
    c->keep_turns = 4;
    c->snip_item_share = 0.10;
}

int ladder_config_from_json(ladder_config *c, const json_t *obj, char *why, size_t why_len)
{
    if (!obj)
        return 0;
    if (!json_is_object(obj)) {
        snprintf(why, why_len, "must be an object");
        return -1;
    }
    static const char *const keys[] = {"snip", "micro", "collapse", "compact"};
    double *fields[] = {&c->snip, &c->micro, &c->collapse, &c->compact};
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_object_get(obj, keys[i]);
        if (!v)
            continue;
        if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) >= 1) {
            snprintf(why, why_len, "\"%s\" must be a number between 0 and 1 (a share of the window)",
                     keys[i]);
            return -1;
        }
        *fields[i] = json_number_value(v);
    }
    if (!(c->snip < c->micro && c->micro < c->collapse && c->collapse < c->compact)) {
        snprintf(why, why_len, "thresholds must increase: snip < micro < collapse < compact "
                 "(%.2f, %.2f, %.2f, %.2f)", c->snip, c->micro, c->collapse, c->compact);
        return -1;
    }
    json_t *k = json_object_get(obj, "keep_results");
    if (k) {
        if (!json_is_integer(k) || json_integer_value(k) < 0 || json_integer_value(k) > 1000) {
            snprintf(why, why_len, "\"keep_results\" must be an integer from 0 to 1000");
            return -1;
        }
        c->keep_results = (int)json_integer_value(k);
    }
    k = json_object_get(obj, "keep_turns");
    if (k) {
        if (!json_is_integer(k) || json_integer_value(k) < 1 || json_integer_value(k) > 1000) {
            snprintf(why, why_len, "\"keep_turns\" must be an integer from 1 to 1000");
            return -1;
        }
        c->keep_turns = (int)json_integer_value(k);
    }
    return 0;
}

const char *ladder_step_name(ladder_step s)
{
    static const char *const names[] = {"none", "snip", "micro", "collapse", "compact", "renew"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "none";
}

ladder_step ladder_step_for(const ladder_config *c, double rho)
{
    if (rho >= 1.0)
        return LADDER_RENEW;
    if (rho >= c->compact)
        return LADDER_COMPACT;
    if (rho >= c->collapse)
        return LADDER_COLLAPSE;
    if (rho >= c->micro)
        return LADDER_MICRO;
    if (rho >= c->snip)
        return LADDER_SNIP;
    return LADDER_NONE;
}

/* --- edits and the view ---------------------------------------------------- */

static unsigned long next_stamp(void)
{
    static atomic_ulong stamps;
    return atomic_fetch_add(&stamps, 1) + 1;
}

void ladder_edits_init(ladder_edits *e)
{
    e->stamp = next_stamp();
    e->results = json_object();
    e->messages = json_object();
    e->collapses = json_object();
}

void ladder_edits_free(ladder_edits *e)
{
    json_decref(e->results);
    json_decref(e->messages);
    json_decref(e->collapses);
    memset(e, 0, sizeof *e);
}

void ladder_edits_add(ladder_edits *e, const json_t *rec)
{
    const char *type = record_type(rec);
    if (!type || strcmp(type, RECORD_CONTEXT_EDIT) != 0)
        return;
    e->stamp = next_stamp();
    const char *key;
    json_t *v;
    json_object_foreach(json_get_obj(rec, "results"), key, v)
        if (json_is_string(v))
            json_object_set(e->results, key, v);
    json_object_foreach(json_get_obj(rec, "messages"), key, v)
        if (json_is_string(v))
            json_object_set(e->messages, key, v);
    json_t *c = json_get_obj(rec, "collapse");
    const char *first = json_get_str(c, "first", NULL), *last = json_get_str(c, "last", NULL);
    if (first && last && json_is_string(json_object_get(c, "text")))
        json_object_set_new(e->collapses, first,
                            json_pack("{s:s,s:O,s:b}", "last", last, "text",
                                      json_object_get(c, "text"), "compacted",
                                      json_get_bool(c, "compacted", false)));
}

void ladder_edits_load(ladder_edits *e, transcript *t)
{
    /* By type first: a lazily opened transcript reads only these lines. */
    for (size_t i = 0; i < transcript_count(t); i++)
        if (!strcmp(transcript_record_type(t, i), RECORD_CONTEXT_EDIT))
            ladder_edits_add(e, transcript_record(t, i));
}

/* The user-side record a folded stretch becomes; "compacted" marks a
 * model-written summary (a background compaction) rather than a local fold. */
static json_t *synth_user_text(const char *id, const char *text, bool compacted)
{
    json_t *m = json_pack("{s:s,s:s,s:s,s:[{s:s,s:s}],s:b}", "type", RECORD_MESSAGE, "id", id,
                          "role", "user", "content", "type", "text", "text", text, "collapsed",
                          1);
    if (compacted)
        json_object_set_new(m, "compacted", json_true());
    return m;
}

void ladder_view(const ladder_edits *e, json_t *const *recs, size_t n, json_t ***out,
                 size_t *nout, json_t **keep)
{
    json_t **v = xcalloc(n ? n : 1, sizeof *v);
    size_t k = 0;
    *keep = json_array();
    bool any = json_object_size(e->results) || json_object_size(e->messages) ||
               json_object_size(e->collapses);
    for (size_t i = 0; i < n; i++) {
        json_t *r = recs[i];
        if (!any) {
            v[k++] = r;
            continue;
        }
        const char *id = record_id(r);
        json_t *c = id ? json_object_get(e->collapses, id) : NULL;
        if (c) {
            /* Fold only when the stretch's end is on this chain: a rewind may
             * have cut it off, and folding to the end would hide the tail. */
            const char *last = json_get_str(c, "last", "");
            size_t j = i;
            while (j < n && strcmp(record_id(recs[j]) ? record_id(recs[j]) : "", last) != 0)
                j++;
            if (j < n) {
                json_t *s = synth_user_text(id, json_get_str(c, "text", ""),
                                            json_get_bool(c, "compacted", false));
                json_array_append_new(*keep, s);
                v[k++] = s;
                i = j;
                continue;
            }
        }
        const char *type = record_type(r);
        json_t *repl = NULL;
        if (type && strcmp(type, RECORD_FUNCTION_CALL_RESULT) == 0) {
            json_t *t = json_object_get(e->results, json_get_str(r, "callId", ""));
            if (t) {
                repl = json_copy(r);
                json_object_set(repl, "output", t);
            }
        } else if (id && record_is_user_message(r)) {
            json_t *t = json_object_get(e->messages, id);
            if (t) {
                /* The text is replaced; images stay (snip cuts text only). */
                json_t *content = json_pack("[{s:s,s:O}]", "type", "text", "text", t);
                size_t bi;
                json_t *blk;
                json_array_foreach(json_get_arr(r, "content"), bi, blk)
                    if (json_is_object(blk) && strcmp(json_get_str(blk, "type", ""), "text"))
                        json_array_append(content, blk);
                repl = json_copy(r);
                json_object_set_new(repl, "content", content);
            }
        }
        if (repl) {
            json_array_append_new(*keep, repl);
            v[k++] = repl;
        } else {
            v[k++] = r;
        }
    }
    *out = v;
    *nout = k;
}

/* --- sizes ------------------------------------------------------------------ */

int64_t ladder_record_tokens(const json_t *rec)
{
    const char *type = record_type(rec);
    int64_t t = TOKENS_PER_BLOCK;
    if (!type)
        return 0;
    if (!strcmp(type, RECORD_FUNCTION_CALL_RESULT))
        return t + tokens_estimate_cstr(json_get_str(rec, "output", ""));
    if (!strcmp(type, RECORD_FUNCTION_CALL))
        return t + tokens_estimate_cstr(json_get_str(rec, "name", "")) +
               tokens_estimate_cstr(json_get_str(rec, "arguments", ""));
    if (!strcmp(type, RECORD_REASONING))
        return t + tokens_estimate_cstr(json_get_str(rec, "text", "")) +
               tokens_estimate_cstr(json_get_str(rec, "redactedData", "")) * 3 / 4;
    if (!strcmp(type, RECORD_SUMMARY))
        return t + tokens_estimate_cstr(json_get_str(rec, "summary", ""));
    if (!strcmp(type, RECORD_MESSAGE)) {
        json_t *content = json_object_get(rec, "content");
        if (json_is_string(content))
            return t + tokens_estimate_cstr(json_string_value(content));
        size_t i;
        json_t *b;
        json_array_foreach(json_get_arr(rec, "content"), i, b) {
            const char *bt = json_get_str(b, "type", "");
            t += !strcmp(bt, "image") ? TOKENS_PER_IMAGE
                                      : tokens_estimate_cstr(json_get_str(b, "text", ""));
        }
        return t;
    }
    return 0;
}

static json_t *edit_record(const char *kind, int64_t saved)
{
    json_t *rec = record_new(RECORD_CONTEXT_EDIT);
    json_object_set_new(rec, "parentId", json_null());
    json_set_str(rec, "kind", kind);
    json_object_set_new(rec, "savedTokens", json_integer(saved));
    return rec;
}

/* --- A: snip ------------------------------------------------------------------ */

json_t *ladder_snip(const ladder_config *c, json_t *const *view, size_t n, int64_t window,
                    int64_t *saved_est)
{
    *saved_est = 0;
    int64_t limit = (int64_t)(c->snip_item_share * (double)window);
    if (limit < 200)
        limit = 200;
    /* The largest oversized item; the newest user message (the request at
     * hand) is never cut. */
    size_t last_user = n;
    for (size_t i = n; i-- > 0;)
        if (record_is_user_message(view[i]) && !json_get_bool(view[i], "collapsed", false)) {
            last_user = i;
            break;
        }
    size_t best = n;
    int64_t best_t = limit;
    for (size_t i = 0; i < n; i++) {
        const char *type = record_type(view[i]);
        bool result = type && !strcmp(type, RECORD_FUNCTION_CALL_RESULT);
        bool user = record_is_user_message(view[i]) && i != last_user &&
                    !json_get_bool(view[i], "collapsed", false);
        if (!result && !user)
            continue;
        /* A message weighs what snip can cut: its text, not its images. */
        int64_t t;
        if (result) {
            t = ladder_record_tokens(view[i]);
        } else {
            char *m = record_message_text(view[i]);
            t = TOKENS_PER_BLOCK + tokens_estimate_cstr(m);
            free(m);
        }
        if (t > best_t) {
            best = i;
            best_t = t;
        }
    }
    if (best == n)
        return NULL;
    json_t *r = view[best];
    bool result = !strcmp(record_type(r), RECORD_FUNCTION_CALL_RESULT);
    loom_str text = LOOM_STR_INIT;
    if (result) {
        str_puts(&text, json_get_str(r, "output", ""));
    } else {
        char *m = record_message_text(r);
        str_puts(&text, m);
        free(m);
    }
    /* Keep half the limit: well under it, so the item is not picked again. */
    size_t cap = (size_t)(limit / 2) * 36 / 10;
    size_t before = text.len;
    str_cut_middle(&text, cap, "to save context (snipped; re-read the source if you need it)");
    if (text.len >= before) {
        str_free(&text);
        return NULL;
    }
    *saved_est = best_t - TOKENS_PER_BLOCK - tokens_estimate_text(text.ptr, text.len);
    json_t *rec = edit_record("snip", *saved_est);
    json_t *map = json_object();
    json_object_set_new(map, result ? json_get_str(r, "callId", "") : record_id(r),
                        json_stringn(text.ptr, text.len));
    json_object_set_new(rec, result ? "results" : "messages", map);
    str_free(&text);
    return rec;
}

/* --- B: micro ------------------------------------------------------------------ */

json_t *ladder_micro(const ladder_config *c, json_t *const *view, size_t n, int64_t *saved_est)
{
    *saved_est = 0;
    size_t kept = 0;
    json_t *map = json_object();
    int64_t saved = 0;
    for (size_t i = n; i-- > 0;) {
        const char *type = record_type(view[i]);
        if (!type || strcmp(type, RECORD_FUNCTION_CALL_RESULT) != 0)
            continue;
        if (kept < (size_t)c->keep_results) {
            kept++;
            continue;
        }
        const char *out = json_get_str(view[i], "output", "");
        if (!strncmp(out, MICRO_MARKER, strlen(MICRO_MARKER)))
            continue;
        int64_t t = tokens_estimate_cstr(out);
        if (t < 64)
            continue; /* a short result costs less than the note replacing it */
        char note[200];
        snprintf(note, sizeof note,
                 MICRO_MARKER ": %zu characters. Run the tool again if you need them.]",
                 strlen(out));
        saved += t - tokens_estimate_cstr(note);
        json_object_set_new(map, json_get_str(view[i], "callId", ""), json_string(note));
    }
    if (json_object_size(map) == 0) {
        json_decref(map);
        return NULL;
    }
    *saved_est = saved;
    json_t *rec = edit_record("micro", saved);
    json_object_set_new(rec, "results", map);
    return rec;
}

/* --- C: collapse ---------------------------------------------------------------- */

static void put_clipped(loom_str *s, const char *text, size_t max)
{
    size_t n = strcspn(text, "\n");
    bool more = text[n] != '\0';
    if (n > max) {
        n = max;
        while (n > 0 && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--;
        more = true;
    }
    str_append(s, text, n);
    if (more)
        str_puts(s, "…");
}

json_t *ladder_collapse(const ladder_config *c, json_t *const *view, size_t n,
                        int64_t *saved_est)
{
    *saved_est = 0;
    /* Assistant turns begin where an assistant-side record follows a
     * user-side one. */
    size_t *starts = xcalloc(n ? n : 1, sizeof *starts);
    size_t n_starts = 0;
    for (size_t i = 1; i < n; i++)
        if (record_is_assistant_side(view[i]) && !record_is_assistant_side(view[i - 1]))
            starts[n_starts++] = i;
    if (n_starts < (size_t)c->keep_turns + 2) {
        free(starts);
        return NULL; /* fewer than two foldable turns */
    }
    size_t first = starts[0], end = starts[n_starts - (size_t)c->keep_turns]; /* [first, end) */
    free(starts);
    const char *first_id = record_id(view[first]), *last_id = record_id(view[end - 1]);
    if (!first_id || !last_id || json_get_bool(view[end - 1], "collapsed", false))
        return NULL;
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "[Earlier turns, folded to save context. What was done (already complete, "
                 "do not redo it):]\n");
    int64_t before = 0;
    for (size_t i = first; i < end; i++) {
        json_t *r = view[i];
        const char *type = record_type(r);
        before += ladder_record_tokens(r);
        if (!type)
            continue;
        if (!strcmp(type, RECORD_FUNCTION_CALL)) {
            str_printf(&s, "- %s ", json_get_str(r, "name", "?"));
            put_clipped(&s, json_get_str(r, "arguments", ""), 120);
            str_putc(&s, '\n');
        } else if (!strcmp(type, RECORD_FUNCTION_CALL_RESULT)) {
            const char *out = json_get_str(r, "output", "");
            str_printf(&s, "  → %s, %zu chars: ",
                       json_get_bool(r, "isError", false) ? "error" : "ok", strlen(out));
            put_clipped(&s, out, 100);
            str_putc(&s, '\n');
        } else if (!strcmp(type, RECORD_MESSAGE)) {
            char *t = record_message_text(r);
            if (record_is_user_message(r) && json_get_bool(r, "collapsed", false)) {
                str_printf(&s, "%s\n", t);
            } else if (record_is_user_message(r)) {
                /* The user's own words are kept verbatim: corrections matter. */
                str_printf(&s, "- the user wrote (verbatim): %s\n", t);
            } else if (*t) {
                str_puts(&s, "- you said: ");
                put_clipped(&s, t, 160);
                str_putc(&s, '\n');
            }
            free(t);
        }
    }
    int64_t after = TOKENS_PER_BLOCK + tokens_estimate_text(s.ptr, s.len);
    if (after >= before) {
        str_free(&s);
        return NULL;
    }
    *saved_est = before - after;
    json_t *rec = edit_record("collapse", *saved_est);
    json_object_set_new(rec, "collapse", json_pack("{s:s,s:s,s:s%}", "first", first_id, "last",
                                                   last_id, "text", s.ptr, s.len));
    str_free(&s);
    return rec;
}
