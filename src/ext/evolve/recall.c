/* recall.c — E1's way back in: the M_f patterns and failures relevant to a
 * goal, as a block for C_memory (seed 000 row 5.7a: "injected into
 * C_memory next session").
 *
 * Relevance is lexical and deterministic: the goal's words (evolve_words)
 * against the words of an entry's name, description and signature; the
 * score is the number shared, ties broken by seen and then recency. At
 * most RECALL_MAX entries, each cut to RECALL_ITEM_CHARS. An entry is a
 * file anyone may have written, so its text is neutralized before it is
 * injected: '<' becomes ‹, so it can neither close the block nor forge a
 * <system-reminder> (no tag opens without one). learn's recall (ext/memory/) may call
 * evolve_recall_block or replace it; the files' format is entry.c's.
 * No state; any thread. */
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "ext/evolve/evolve_internal.h"

#define RECALL_MAX 5
#define RECALL_ITEM_CHARS 600

static void put_neutral(loom_str *s, const char *text, size_t cap)
{
    size_t n = 0;
    for (const char *p = text ? text : ""; *p; p++, n++) {
        if (n >= cap && ((unsigned char)*p & 0xC0) != 0x80)
            break; /* cut on a character's first byte, never inside one */
        if (*p == '<')
            str_puts(s, "‹");
        else if (*p == '\r')
            continue;
        else
            str_putc(s, *p);
    }
}

static int shared(const json_t *goal_words, const json_t *entry, json_t *why)
{
    loom_str all = {0};
    str_printf(&all, "%s %s %s", json_get_str(entry, "name", ""),
               json_get_str(entry, "description", ""), json_get_str(entry, "signature", ""));
    json_t *ew = evolve_words(str_cstr(&all));
    str_free(&all);
    int n = 0;
    size_t i, k;
    json_t *g, *e;
    json_array_foreach(goal_words, i, g) {
        json_array_foreach(ew, k, e) {
            if (json_equal(g, e)) {
                n++;
                json_array_append(why, g);
                break;
            }
        }
    }
    json_decref(ew);
    return n;
}

typedef struct cand {
    json_t *entry;
    int score;
    json_t *why;
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->score != y->score)
        return y->score - x->score;
    json_int_t sx = json_integer_value(json_object_get(x->entry, "seen"));
    json_int_t sy = json_integer_value(json_object_get(y->entry, "seen"));
    if (sx != sy)
        return sx < sy ? 1 : -1;
    int t = strcmp(json_get_str(y->entry, "last_seen", ""), json_get_str(x->entry, "last_seen", ""));
    return t ? t : strcmp(json_get_str(x->entry, "path", ""), json_get_str(y->entry, "path", ""));
}

char *evolve_recall_block(const char *root, const char *goal, json_t **items)
{
    if (items)
        *items = NULL;
    json_t *words = evolve_words(goal);
    cand *cs = NULL;
    size_t nc = 0;
    static const char *const dirs[] = {".loom/mf/failures", ".loom/mf/patterns"};
    json_t *lists[2];
    for (int d = 0; d < 2; d++) {
        char *dir = evolve_path(root, dirs[d]);
        lists[d] = mf_entry_list(dir, NULL);
        free(dir);
        size_t i;
        json_t *e;
        json_array_foreach(lists[d], i, e) {
            json_t *why = json_array();
            int sc = shared(words, e, why);
            if (sc <= 0) {
                json_decref(why);
                continue;
            }
            cs = xrealloc(cs, (nc + 1) * sizeof *cs);
            cs[nc++] = (cand){e, sc, why};
        }
    }
    json_decref(words);
    char *block = NULL;
    if (nc) {
        qsort(cs, nc, sizeof *cs, cand_cmp);
        loom_str s = {0};
        str_puts(&s, "<evolve-memory>\n## Lessons from earlier runs in this project (M_f)\n"
                     "Distilled by Loom from past runs' records; check them against the code "
                     "before relying on them.\n");
        json_t *chosen = json_array();
        for (size_t i = 0; i < nc && i < RECALL_MAX; i++) {
            const json_t *e = cs[i].entry;
            bool failure = !strcmp(json_get_str(e, "kind", ""), "failure");
            str_printf(&s, "\n### %s: ", failure ? "Known failure" : "Pattern that worked");
            put_neutral(&s, json_get_str(e, "name", ""), 160);
            str_printf(&s, " (seen %lld times, last %.10s)\n",
                       (long long)json_integer_value(json_object_get(e, "seen")),
                       json_get_str(e, "last_seen", ""));
            put_neutral(&s, json_get_str(e, "description", ""), RECALL_ITEM_CHARS);
            str_puts(&s, "\nSignature: ");
            put_neutral(&s, json_get_str(e, "signature", ""), RECALL_ITEM_CHARS);
            str_putc(&s, '\n');
            if (failure)
                str_puts(&s, "Do not repeat the failing step as it was; find the cause first or "
                             "take another way.\n");
            loom_str why = {0};
            str_puts(&why, "shares ");
            size_t k;
            const json_t *w;
            json_array_foreach(cs[i].why, k, w) {
                str_printf(&why, "%s%s", k ? ", " : "", json_string_value(w));
            }
            str_puts(&why, " with the goal");
            json_array_append_new(chosen, json_pack("{s:s,s:s,s:i,s:s}", "path",
                                                    json_get_str(e, "path", ""), "kind",
                                                    json_get_str(e, "kind", ""), "score",
                                                    cs[i].score, "why", str_cstr(&why)));
            str_free(&why);
        }
        str_puts(&s, "</evolve-memory>\n");
        block = str_steal(&s);
        if (items)
            *items = chosen;
        else
            json_decref(chosen);
    }
    for (size_t i = 0; i < nc; i++)
        json_decref(cs[i].why);
    free(cs);
    json_decref(lists[0]);
    json_decref(lists[1]);
    return block;
}

int evolve_recall_record(const char *root, const char *session_id, const char *run_id,
                         const json_t *items, loom_error *err)
{
    json_t *rec = json_pack("{s:s,s:s,s:O}", "session", session_id, "run", run_id, "items", items);
    if (!rec)
        return 0;
    char now[32];
    evolve_now(now);
    json_object_set_new(rec, "ts", json_string(now));
    int rc = evolve_ledger_append(root, ".loom/mf/recall.jsonl", rec, err);
    json_decref(rec);
    return rc;
}
