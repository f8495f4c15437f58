/* renew.c — scoring and compressing the history for renew (see renew.h). */
#include "context/renew.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "context/ladder.h"
#include "context/tokens.h"
#include "session/record.h"

#define GOAL_WORDS_MAX 64

typedef struct item {
    size_t index;      /* in the view */
    int age;           /* assistant turns after it */
    double score;      /* INFINITY for the core */
    char *text;        /* the clipped line(s) to keep */
    int64_t tokens;
} item;

/* Lower-case words of three letters or more, deduplicated. */
static size_t goal_words(const char *goal, char words[][32])
{
    size_t n = 0;
    const char *p = goal ? goal : "";
    while (*p && n < GOAL_WORDS_MAX) {
        while (*p && !isalnum((unsigned char)*p))
            p++;
        char w[32];
        size_t k = 0;
        while (*p && (isalnum((unsigned char)*p) || *p == '_')) {
            if (k < sizeof w - 1)
                w[k++] = (char)tolower((unsigned char)*p);
            p++;
        }
        w[k] = '\0';
        if (k < 3)
            continue;
        bool dup = false;
        for (size_t i = 0; i < n && !dup; i++)
            dup = strcmp(words[i], w) == 0;
        if (!dup)
            memcpy(words[n++], w, k + 1);
    }
    return n;
}

static double relevance(const char *text, char words[][32], size_t n_words)
{
    if (n_words == 0)
        return 1.0;
    size_t len = strlen(text);
    char *low = xmalloc(len + 1);
    for (size_t i = 0; i <= len; i++)
        low[i] = (char)tolower((unsigned char)text[i]);
    size_t hits = 0;
    for (size_t i = 0; i < n_words; i++)
        hits += strstr(low, words[i]) != NULL;
    free(low);
    return 0.1 + 0.9 * (double)hits / (double)n_words;
}

static void put_clip(loom_str *s, const char *text, size_t max)
{
    size_t n = strlen(text);
    if (n <= max) {
        str_puts(s, text);
        return;
    }
    while (max > 0 && ((unsigned char)text[max] & 0xC0) == 0x80)
        max--;
    str_append(s, text, max);
    str_printf(s, "…[%zu more characters]", n - max);
}

static int cmp_score(const void *a, const void *b)
{
    const item *x = *(item *const *)a, *y = *(item *const *)b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->index < y->index ? 1 : -1; /* ties: the newer first */
}

char *renew_compress(json_t *const *view, size_t n, const char *goal, int64_t budget_tokens,
                     double lambda, int turn, renew_stats *st)
{
    renew_stats local;
    if (!st)
        st = &local;
    memset(st, 0, sizeof *st);
    char words[GOAL_WORDS_MAX][32];
    size_t n_words = goal_words(goal, words);

    /* Ages: assistant turns after each record. */
    int *age = xcalloc(n ? n : 1, sizeof *age);
    int turns = 0;
    for (size_t i = n; i-- > 0;) {
        age[i] = turns;
        if (record_is_assistant_side(view[i]) && (i == 0 || !record_is_assistant_side(view[i - 1])))
            turns++;
    }
    item *items = xcalloc(n ? n : 1, sizeof *items);
    size_t n_items = 0;
    bool goal_seen = false;
    for (size_t i = 0; i < n; i++) {
        const json_t *r = view[i];
        const char *type = record_type(r);
        if (!type || !record_is_conversation(type))
            continue;
        st->tokens_before += ladder_record_tokens(r);
        loom_str s = LOOM_STR_INIT;
        double k = 1.0;
        bool core = false;
        if (!strcmp(type, RECORD_SUMMARY)) {
            str_puts(&s, "- earlier summary: ");
            put_clip(&s, json_get_str(r, "summary", ""), 4000);
            core = true; /* it already holds the earlier core */
        } else if (!strcmp(type, RECORD_MESSAGE)) {
            char *t = record_message_text(r);
            if (record_is_user_message(r)) {
                json_t *pd = json_object_get(r, "providerData");
                if (json_get_bool(r, "collapsed", false)) {
                    str_puts(&s, "- ");
                    put_clip(&s, t, 1500);
                } else if (!json_get_bool(pd, "skipRun", false)) {
                    str_printf(&s, "- %s (verbatim): ", goal_seen ? "the user wrote" : "goal");
                    str_puts(&s, t);
                    core = true;
                    goal_seen = true;
                }
            } else if (*t) {
                str_puts(&s, "- you said: ");
                put_clip(&s, t, 400);
                k = 1.2;
            }
            free(t);
        } else if (!strcmp(type, RECORD_FUNCTION_CALL)) {
            str_printf(&s, "- called %s ", json_get_str(r, "name", "?"));
            put_clip(&s, json_get_str(r, "arguments", ""), 200);
        } else if (!strcmp(type, RECORD_FUNCTION_CALL_RESULT)) {
            bool err = json_get_bool(r, "isError", false);
            str_printf(&s, "  → %s: ", err ? "error" : "result");
            put_clip(&s, json_get_str(r, "output", ""), 600);
            k = 1.5;
            core = err && age[i] < RENEW_RECENT_ERROR_TURNS;
        }
        if (!s.len) {
            str_free(&s);
            continue;
        }
        item *it = &items[n_items++];
        it->index = i;
        it->age = age[i];
        it->text = str_steal(&s);
        it->tokens = tokens_estimate_cstr(it->text) + 2;
        it->score = core ? INFINITY
                         : k * relevance(it->text, words, n_words) * exp(-lambda * it->age);
    }
    st->items = n_items;

    item **order = xcalloc(n_items ? n_items : 1, sizeof *order);
    for (size_t i = 0; i < n_items; i++)
        order[i] = &items[i];
    qsort(order, n_items, sizeof *order, cmp_score);
    bool *keep = xcalloc(n_items ? n_items : 1, sizeof *keep);
    int64_t spent = 0;
    for (size_t i = 0; i < n_items; i++) {
        item *it = order[i];
        bool core = isinf(it->score);
        if (!core && spent + it->tokens > budget_tokens)
            continue;
        keep[it - items] = true;
        spent += it->tokens;
        st->kept++;
        st->core += core;
    }

    loom_str out = LOOM_STR_INIT;
    str_printf(&out,
               "[Context renewed at turn %d: the history was compressed to what matters for the "
               "goal (%zu of %zu items kept, by relevance to the goal and recency; the goal, the "
               "user's words and recent errors always). Work already done is complete — do not "
               "redo it. The working memory at the end of the next message carries the goal, the "
               "plan and the dashboard over unchanged.]\n",
               turn, st->kept, n_items);
    for (size_t i = 0; i < n_items; i++)
        if (keep[i]) {
            str_puts(&out, items[i].text);
            str_putc(&out, '\n');
        }
    st->tokens_after = tokens_estimate_text(out.ptr, out.len);
    for (size_t i = 0; i < n_items; i++)
        free(items[i].text);
    free(items);
    free(order);
    free(keep);
    free(age);
    return str_steal(&out);
}
