/* compact.c — the summarization request and its reply (see compact.h). */
#include "context/compact.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "context/tokens.h"
#include "session/history.h"
#include "session/record.h"

const char *const compact_sections[6] = {
    "Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections",
    "Errors and Fixes",           "Problem Solving",        "All User Messages",
};

/* One tool result in the rendered conversation keeps at most this much. */
#define COMPACT_RESULT_CAP 2000

static void put_message_text(loom_str *s, const json_t *rec)
{
    json_t *content = json_object_get(rec, "content");
    if (json_is_string(content)) {
        str_puts(s, json_string_value(content));
        return;
    }
    size_t i;
    json_t *b;
    bool first = true;
    json_array_foreach(json_is_array(content) ? content : NULL, i, b) {
        const char *type = json_get_str(b, "type", "");
        if (!first)
            str_putc(s, '\n');
        first = false;
        if (!strcmp(type, "image"))
            str_puts(s, "[image]");
        else
            str_puts(s, json_get_str(b, "text", ""));
    }
}

/* A user message that a person wrote: not a collapsed fold, not a note
 * the harness recorded in the user's place (skipRun). */
static bool written_by_user(const json_t *rec)
{
    if (!record_is_user_message(rec) || json_get_bool(rec, "collapsed", false))
        return false;
    json_t *pd = json_object_get(rec, "providerData");
    return !json_get_bool(pd, "skipRun", false);
}

void compact_render_conversation(json_t *const *view, size_t n, loom_str *out)
{
    for (size_t i = 0; i < n; i++) {
        const json_t *r = view[i];
        const char *type = record_type(r);
        if (!type || !record_is_conversation(type))
            continue;
        if (!strcmp(type, RECORD_SUMMARY)) {
            str_puts(out, "[summary of the conversation before this point]\n");
            str_puts(out, json_get_str(r, "summary", ""));
        } else if (!strcmp(type, RECORD_MESSAGE)) {
            str_printf(out, "[%s]\n", record_is_user_message(r) ? "user" : "assistant");
            put_message_text(out, r);
        } else if (!strcmp(type, RECORD_REASONING)) {
            const char *t = json_get_str(r, "text", "");
            if (!*t)
                continue;
            str_puts(out, "[assistant reasoning]\n");
            str_puts(out, t);
        } else if (!strcmp(type, RECORD_FUNCTION_CALL)) {
            str_printf(out, "[tool call %s %s]\n%s", json_get_str(r, "name", "?"),
                       json_get_str(r, "callId", ""), json_get_str(r, "arguments", "{}"));
        } else if (!strcmp(type, RECORD_FUNCTION_CALL_RESULT)) {
            loom_str res = LOOM_STR_INIT;
            str_puts(&res, json_get_str(r, "output", ""));
            str_cut_middle(&res, COMPACT_RESULT_CAP, "of this tool result");
            str_printf(out, "[tool result %s%s]\n%s", json_get_str(r, "callId", ""),
                       json_get_bool(r, "isError", false) ? ", error" : "", str_cstr(&res));
            str_free(&res);
        }
        str_puts(out, "\n\n");
    }
}

json_t *compact_user_messages(json_t *const *chain, size_t n)
{
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        if (!written_by_user(chain[i]))
            continue;
        loom_str s = LOOM_STR_INIT;
        put_message_text(&s, chain[i]);
        json_array_append_new(out, json_stringn(str_cstr(&s), s.len));
        str_free(&s);
    }
    return out;
}

void compact_build_request(json_t *const *view, size_t n, const json_t *user_messages,
                           const char *instructions, int64_t budget_tokens, msg_request *req)
{
    req->system = xstrdup(COMPACT_SYSTEM_PROMPT);
    req->temperature = -1;
    loom_str conv = LOOM_STR_INIT;
    compact_render_conversation(view, n, &conv);

    loom_str tail = LOOM_STR_INIT;
    str_puts(&tail,
             "Write a summary of the conversation above that lets the work go on without it. "
             "Everything it reports as done is already complete: the agent must NOT redo, re-run "
             "or re-execute any of it.\n\n"
             "First think briefly inside <analysis></analysis> (at most 300 words): go through the "
             "conversation in order and note each request, the approach taken, the decisions, "
             "the files, the errors and their fixes, and above all every correction or piece of "
             "feedback from the user.\n\n"
             "Then write the summary inside <summary></summary>, with exactly these six "
             "sections:\n");
    static const char *const what[6] = {
        "everything the user asked for, in detail",
        "the technologies, conventions and decisions that matter",
        "the files read, changed or created, why each matters, and the important snippets "
        "(whole for the most recent changes)",
        "each error met and how it was fixed, with what the user said about it",
        "what was solved and what is still open",
        "every message the user wrote (not tool results), verbatim; shorten only very long or "
        "unreadable parts, marking the cut with …[content truncated]…",
    };
    for (int i = 0; i < 6; i++)
        str_printf(&tail, "%d. %s — %s.\n", i + 1, compact_sections[i], what[i]);
    str_puts(&tail, "\nKeep the summary under 1,000 words. Write in the language the user "
                    "writes in, not the language of code or logs. Do not redo completed work.\n");
    size_t i;
    json_t *m;
    json_array_foreach(user_messages, i, m) {
        if (i == 0)
            str_puts(&tail, "\nThe user's messages, verbatim — carry them into section 6 "
                            "unchanged, and honour every correction in them:\n");
        str_printf(&tail, "<user_message>\n%s\n</user_message>\n", json_string_value(m));
    }
    if (instructions && *instructions)
        str_printf(&tail, "\nAdditional instructions for this summary: %s\n", instructions);

    /* Fit: the instructions and the user's words stay whole; the middle of
     * the conversation goes first (its start holds the request, its end the
     * current work). */
    int64_t room = budget_tokens - tokens_estimate_text(tail.ptr, tail.len) -
                   tokens_estimate_cstr(req->system) - 64;
    if (room < 256)
        room = 256;
    /* The cap is in bytes, the room in tokens: the estimate counts each
     * non-ASCII character as a token, so a cap at 3.6 bytes per token would
     * overshoot on Cyrillic or CJK text. Cut at the measured rate, then
     * tighten until the cut conversation fits. */
    int64_t est = tokens_estimate_text(conv.ptr, conv.len);
    if (est > room) {
        size_t cap = (size_t)((double)conv.len * (double)room / (double)est);
        for (;;) {
            loom_str cut = LOOM_STR_INIT;
            str_append(&cut, conv.ptr, conv.len);
            str_cut_middle(&cut, cap, "of the conversation");
            int64_t got = tokens_estimate_text(cut.ptr, cut.len);
            if (got <= room || cap == 0) {
                str_free(&conv);
                conv = cut;
                break;
            }
            str_free(&cut);
            size_t next = (size_t)((double)cap * (double)room / (double)got);
            cap = next < cap ? next : cap - 1;
        }
    }

    loom_str all = LOOM_STR_INIT;
    str_puts(&all, "<conversation>\n");
    str_append(&all, conv.ptr, conv.len);
    str_puts(&all, "</conversation>\n\n");
    str_append(&all, tail.ptr, tail.len);
    msg_message_add_text(msg_request_add_message(req, MSG_ROLE_USER), str_cstr(&all));
    str_free(&all);
    str_free(&conv);
    str_free(&tail);
}

static char *trimmed(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')) {
        s++;
        n--;
    }
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        n--;
    return n ? xstrndup(s, n) : NULL;
}

char *compact_extract_summary(const char *reply)
{
    if (!reply)
        return NULL;
    /* Look after the analysis: it may name the tag it is about to write. */
    const char *after = strstr(reply, "</analysis>");
    const char *open = after ? strstr(after, "<summary>") : NULL;
    if (!open)
        open = strstr(reply, "<summary>");
    if (open) {
        open += strlen("<summary>");
        const char *close = strstr(open, "</summary>");
        return trimmed(open, close ? (size_t)(close - open) : strlen(open));
    }
    loom_str s = LOOM_STR_INIT;
    const char *a = strstr(reply, "<analysis>");
    const char *b = a ? strstr(a, "</analysis>") : NULL;
    if (a && b) {
        str_append(&s, reply, (size_t)(a - reply));
        str_puts(&s, b + strlen("</analysis>"));
    } else {
        str_puts(&s, reply);
    }
    char *t = trimmed(str_cstr(&s), s.len);
    str_free(&s);
    return t;
}

bool compact_has_new_history(json_t *const *chain, size_t n)
{
    for (size_t i = n; i-- > 0;) {
        const char *type = record_type(chain[i]);
        if (!type || !record_is_conversation(type))
            continue;
        if (!strcmp(type, RECORD_SUMMARY) || json_get_bool(chain[i], "compacted", false))
            return false; /* reached the last summary with nothing after it */
        /* A prompt carried over a compaction is not new: it is in the summary. */
        if (json_get_str(json_object_get(chain[i], "providerData"), "carriedOverFrom", NULL))
            continue;
        return true;
    }
    return false; /* an empty chain has nothing to summarize either */
}
