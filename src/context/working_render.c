/* working_render.c — the <working-memory> block C_working puts at the tail
 * of every request (the format is in working_render.h).
 *
 * Owns nothing: it reads the state under the working memory's lock, after
 * reading the plan, which has its own lock (the two are never held
 * together). Any thread may call it.
 */
#include "context/working_render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/str.h"
#include "context/plan.h"
#include "context/working_impl.h"

/* U+00B7 MIDDLE DOT and U+2014 EM DASH. */
#define SEP " \u00B7 "
#define DASH " \u2014 "

/* s on one line: control characters become spaces, so nothing the heartbeat
 * or the model wrote can start a line of its own in the block. */
static void put_flat(loom_str *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        str_putc(out, c < 0x20 || c == 0x7f ? ' ' : (char)c);
    }
}

static void put_line(loom_str *out, const char *s)
{
    if (s)
        put_flat(out, s, strlen(s));
}

/* 6712 → "6,712". */
static void put_count(loom_str *out, int64_t v)
{
    char digits[24];
    uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
    snprintf(digits, sizeof digits, "%" PRIu64, u);
    if (v < 0)
        str_putc(out, '-');
    size_t n = strlen(digits);
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            str_putc(out, ',');
        str_putc(out, digits[i]);
    }
}

/* The goal line keeps at most this much (head and tail): it rides in
 * every request, and a prompt with a pasted log must not weigh twice in
 * each of them — nor keep a compacted context over the window. */
#define WORKING_GOAL_CAP 4000

/* The goal keeps its own lines; continuation lines are indented so none of
 * them can pass for another field of the block. */
static void put_goal(loom_str *out, const char *full)
{
    str_puts(out, "goal: ");
    loom_str cut = LOOM_STR_INIT;
    str_puts(&cut, full ? full : "");
    str_cut_middle(&cut, WORKING_GOAL_CAP, "of the goal");
    const char *goal = str_cstr(&cut);
    size_t len = strlen(goal);
    while (len > 0 && strchr(" \t\r\n", goal[len - 1]))
        len--;
    if (len == 0) {
        str_puts(out, "(none)\n");
        str_free(&cut);
        return;
    }
    const char *p = goal, *end = goal + len;
    for (bool first = true;; first = false) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t n = (size_t)(e - p);
        if (n > 0 && p[n - 1] == '\r')
            n--;
        if (!first && n > 0)
            str_puts(out, "  ");
        put_flat(out, p, n);
        str_putc(out, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    str_free(&cut);
}

static void put_dashboard(loom_str *out, const working *w, todo_counts tc, bool have_plan,
                          int64_t now_ms)
{
    const dashboard *d = &w->dash;
    str_puts(out, "dashboard: ");
    if (d->window > 0) {
        /* A loaded snapshot may hold any value: no overflow on huge ones. */
        int64_t pct = 0;
        if (d->tokens > 0 && d->tokens <= (INT64_MAX - d->window / 2) / 100)
            pct = (d->tokens * 100 + d->window / 2) / d->window;
        else if (d->tokens > 0)
            pct = d->tokens / d->window > INT64_MAX / 100 ? INT64_MAX
                                                          : d->tokens / d->window * 100;
        str_printf(out, "context %" PRId64 "%% (", pct);
        put_count(out, d->tokens);
        str_puts(out, " of ");
        put_count(out, d->window);
        str_puts(out, " tokens)");
    } else {
        str_puts(out, "context ~");
        put_count(out, d->tokens);
        str_puts(out, " tokens");
    }
    if (d->budget_total > 0) {
        str_puts(out, SEP "budget ");
        put_count(out, d->budget_used);
        str_puts(out, " of ");
        put_count(out, d->budget_total);
        str_puts(out, " tokens used");
    }
    str_puts(out, SEP "progress: ");
    size_t total = tc.pending + tc.in_progress + tc.completed;
    if (w->progress)
        put_line(out, w->progress);
    else if (have_plan && total > 0)
        str_printf(out, "%zu of %zu plan items done", tc.completed, total);
    else
        str_puts(out, "not reported");
    str_printf(out, SEP "errors in last %d steps: %d", WORKING_ERROR_WINDOW, working_errors_locked(w));
    str_printf(out, SEP "depth %d", d->depth);
    str_puts(out, SEP "heartbeat: ");
    if (d->last_hb_ms == 0) {
        str_puts(out, "off");
    } else {
        int64_t ago = now_ms > d->last_hb_ms
                          ? (int64_t)(((uint64_t)now_ms - (uint64_t)d->last_hb_ms) / 1000)
                          : 0;
        str_printf(out, "%" PRId64 "s ago", ago);
    }
    str_printf(out, SEP "interrupt requested: %s\n", d->interrupt_requested ? "yes" : "no");
}

static void put_events(loom_str *out, const working *w)
{
    str_puts(out, "events:\n");
    /* What must be decided first comes first: critical, high, low; within
     * one urgency, in the order detected. */
    if (working_pending_locked(w) == 0) {
        str_puts(out, "pending: none\n");
    } else {
        str_puts(out, "pending:\n");
        for (int u = EVENT_CRITICAL; u >= EVENT_LOW; u--) {
            for (size_t i = 0; i < w->nevents; i++) {
                const surface_event *e = &w->events[i];
                if (e->state != EVENT_PROJECTED || (int)e->urgency != u)
                    continue;
                time_t t = (time_t)(e->detected_ms / 1000);
                struct tm tm;
                char hms[16] = "??:??:??";
                if (gmtime_r(&t, &tm))
                    strftime(hms, sizeof hms, "%H:%M:%S", &tm);
                str_puts(out, "- [");
                put_line(out, e->id);
                str_printf(out, "] %s ", event_urgency_name(e->urgency));
                put_line(out, e->source);
                str_puts(out, ": ");
                put_line(out, e->summary);
                str_printf(out, " (detected %s UTC)\n", hms);
            }
        }
    }
    bool risks = false;
    for (size_t i = 0; i < w->nevents; i++) {
        const surface_event *e = &w->events[i];
        if (e->state != EVENT_ACKNOWLEDGED)
            continue;
        if (!risks)
            str_puts(out, "active risks:\n");
        risks = true;
        str_puts(out, "- [");
        put_line(out, e->id);
        str_puts(out, "] ");
        put_line(out, e->source);
        str_puts(out, ": ");
        put_line(out, e->summary);
        str_puts(out, DASH);
        put_line(out, e->disposition);
        if (e->note && *e->note) {
            str_puts(out, ": ");
            put_line(out, e->note);
        }
        str_putc(out, '\n');
    }
    if (w->nrecent > 0)
        str_puts(out, "recent decisions:\n");
    for (size_t i = 0; i < w->nrecent; i++) {
        str_puts(out, "- [");
        put_line(out, w->recent[i].id);
        str_puts(out, "] ");
        put_line(out, w->recent[i].disposition);
        str_puts(out, ": ");
        put_line(out, w->recent[i].summary);
        str_putc(out, '\n');
    }
}

static size_t arr_size(const json_t *a)
{
    return a ? json_array_size(a) : 0;
}

static const char *jtext(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* The knowledge surface's items (seed 000 §5.6b): questions, then each
 * evidence pack with its facts, conflicts and citation ids. Only packs
 * are here — never a document's text beyond a pack's key facts. */
static void put_knowledge(loom_str *out, const working *w)
{
    size_t i, j;
    json_t *v, *x;
    json_array_foreach(w->questions, i, v) {
        if (json_is_object(v))
            str_printf(out, "  question %s (%s): %s\n", jtext(v, "question_id"),
                       *jtext(v, "status") ? jtext(v, "status") : "open", jtext(v, "question"));
    }
    json_array_foreach(w->evidence, i, v) {
        if (!json_is_object(v))
            continue;
        str_printf(out, "  pack %s for %s (confidence %.2f, freshness %s): %s\n",
                   jtext(v, "evidence_pack_id"), jtext(v, "question_id"),
                   json_number_value(json_object_get(v, "confidence")), jtext(v, "freshness"),
                   jtext(v, "summary"));
        json_array_foreach(json_object_get(v, "key_facts"), j, x)
            str_printf(out, "    fact: %s\n", json_string_value(x) ? json_string_value(x) : "");
        json_array_foreach(json_object_get(v, "conflicts"), j, x) {
            json_t *c = json_object_get(x, "claims");
            json_t *a = json_array_get(c, 0), *b = json_array_get(c, 1);
            str_printf(out, "    conflict: %s: \"%s\" (%s [%s]) vs \"%s\" (%s [%s])\n",
                       jtext(x, "key"), jtext(a, "value"), jtext(a, "source"),
                       jtext(a, "citation_id"), jtext(b, "value"), jtext(b, "source"),
                       jtext(b, "citation_id"));
        }
        json_t *ids = json_object_get(v, "citations");
        if (json_array_size(ids)) {
            str_puts(out, "    citations:");
            json_array_foreach(ids, j, x)
                str_printf(out, " [%s]", json_string_value(x) ? json_string_value(x) : "");
            str_putc(out, '\n');
        }
    }
}

char *working_render(working *w)
{
    /* The plan has its own lock; read it before taking ours. */
    char *plan = w->plan ? todo_list_render(w->plan) : NULL;
    todo_counts tc = w->plan ? todo_list_counts(w->plan) : (todo_counts){0, 0, 0};
    int64_t now = clock_wall_ms();
    loom_str out = LOOM_STR_INIT;

    working_lock(w);
    str_puts(&out, "<working-memory>\n");
    put_goal(&out, w->goal);
    put_dashboard(&out, w, tc, w->plan != NULL, now);
    str_puts(&out, "plan:\n");
    if (plan && *plan)
        str_puts(&out, plan);
    else
        str_puts(&out, "(no plan yet \u2014 use TodoWrite for multi-step work)\n");
    put_events(&out, w);
    size_t q = arr_size(w->questions), e = arr_size(w->evidence), c = arr_size(w->citations);
    if (q || e || c)
        str_printf(&out,
                   "knowledge: active questions %zu" SEP "evidence packs %zu" SEP
                   "citations %zu\n",
                   q, e, c);
    put_knowledge(&out, w);
    working_unlock(w);
    str_puts(&out, "</working-memory>\n");
    free(plan);
    return str_steal(&out);
}
