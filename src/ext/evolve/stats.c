/* stats.c — the M4 metric set (seed 000, M4 exit criterion: "constraint
 * growth, capability growth and mis-injection rate tracked by one metric
 * set"), over a project's M_f ledgers and its session files.
 *
 *   constraint growth   constraints accepted, by day (mf/review.jsonl)
 *   capability growth   skills (and agents) accepted, by day (same ledger)
 *   mis-injection rate  of the items recalled into runs (mf/recall.jsonl,
 *                       written by the memory recall, ext/memory/recall.c),
 *                       the share the run never used. An item is used when
 *                       the run's records, from its recall line to the
 *                       session's next one, show that
 *                         - a tool call's input names the item's file
 *                           (the run read it), or
 *                         - a skill item was invoked (Skill with its name), or
 *                         - the run's tool inputs or assistant text hold one
 *                           of the item's distinctive terms as a word: the
 *                           words of its signature (an M_f entry), else of
 *                           its frontmatter name, else of its file name,
 *                           common words and tool names left out.
 * An item's path is absolute, or relative to the project root. A session
 * is named by its whole id (a path or a prefix is not looked up); one
 * that cannot be found leaves its items out of the rate
 * (counted in "sessions_missing"), never guessed at. No state; any thread. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "ext/evolve/evolve_internal.h"
#include "session/store.h"

#define SESSION_MAX_BYTES (64u * 1024 * 1024)

/* Cumulative counts of the ledger's accept lines of kind, by day. */
static json_t *growth(const json_t *review, const char *kind, int *total)
{
    json_t *days = json_array();
    *total = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(review, i, r) {
        if (strcmp(json_get_str(r, "kind", ""), kind) != 0 ||
            strcmp(json_get_str(r, "action", ""), "accept") != 0)
            continue;
        char day[11];
        snprintf(day, sizeof day, "%.10s", json_get_str(r, "ts", ""));
        (*total)++;
        json_t *last = json_array_get(days, json_array_size(days) - 1);
        if (last && !strcmp(json_get_str(last, "day", ""), day)) {
            json_object_set_new(last, "accepted", json_integer(json_get_int(last, "accepted", 0) + 1));
            json_object_set_new(last, "total", json_integer(*total));
        } else {
            json_array_append_new(days, json_pack("{s:s,s:i,s:i}", "day", day, "accepted", 1,
                                                  "total", *total));
        }
    }
    return days;
}

/* Whether hay (lowercase) holds term (lowercase) as a whole word. */
static bool has_word(const char *hay, const char *term)
{
    size_t n = strlen(term);
    if (!n)
        return false;
    for (const char *p = strstr(hay, term); p; p = strstr(p + 1, term)) {
        bool before = p == hay || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        bool after = !(isalnum((unsigned char)p[n]) || p[n] == '_');
        if (before && after)
            return true;
    }
    return false;
}

/* The distinctive terms of the item's file. */
static json_t *item_terms(const char *path)
{
    loom_str why = {0};
    char *text = file_read_text(path, MF_ENTRY_MAX_BYTES, FILE_TEXT_NOFOLLOW, &why);
    str_free(&why);
    json_t *terms = NULL;
    if (text) {
        loom_error err;
        json_t *fm = frontmatter_parse(text, NULL, &err);
        const char *sig = json_get_str(fm, "signature", NULL);
        const char *name = json_get_str(fm, "name", NULL);
        if (sig || name)
            terms = evolve_words(sig ? sig : name);
        json_decref(fm);
        free(text);
    }
    if (!terms) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        char *stem = xstrdup(base);
        char *dot = strrchr(stem, '.');
        if (dot)
            *dot = '\0';
        for (char *c = stem; *c; c++)
            if (*c == '-')
                *c = ' ';
        terms = evolve_words(stem);
        free(stem);
    }
    /* A slug's hash ("…-1a2b3c4d") is nobody's word. */
    size_t i = json_array_size(terms);
    while (i-- > 0) {
        const char *w = json_string_value(json_array_get(terms, i));
        size_t n = strlen(w), hex = 0;
        while (hex < n && isxdigit((unsigned char)w[hex]))
            hex++;
        if (n == 8 && hex == 8)
            json_array_remove(terms, i);
    }
    return terms;
}

/* The skill name an item path names (…/skills/<name>/SKILL.md), or NULL. */
static char *skill_of(const char *path)
{
    size_t n = strlen(path);
    if (n < 10 || strcmp(path + n - 9, "/SKILL.md") != 0)
        return NULL;
    const char *end = path + n - 9, *start = end;
    while (start > path && start[-1] != '/')
        start--;
    return xstrndup(start, (size_t)(end - start));
}

static bool item_used(const char *root, const json_t *item, const evolve_trace *t,
                      const char *hay)
{
    const char *path = json_get_str(item, "path", "");
    if (*path) {
        for (size_t i = 0; i < t->n; i++)
            if (strstr(t->steps[i].input, path))
                return true;
    }
    char *skill = skill_of(path);
    if (skill) {
        char key[128];
        snprintf(key, sizeof key, "Skill(%s)", skill);
        free(skill);
        for (size_t i = 0; i < t->n; i++)
            if (!strcmp(t->steps[i].key, key))
                return true;
    }
    /* A relative path is the project root's (a checked-in history). */
    char *file = *path == '/' ? xstrdup(path) : path_join(root, path);
    json_t *terms = item_terms(file);
    free(file);
    bool used = false;
    size_t i;
    json_t *w;
    json_array_foreach(terms, i, w) {
        used = used || has_word(hay, json_string_value(w));
    }
    json_decref(terms);
    return used;
}

/* The records of the session from ts up to (not including) until (NULL: the end). */
static json_t *window(const json_t *records, const char *ts, const char *until)
{
    json_t *out = json_array();
    size_t i;
    const json_t *r;
    json_array_foreach(records, i, r) {
        const char *t = json_get_str(r, "timestamp", "");
        if (strcmp(t, ts) >= 0 && (!until || strcmp(t, until) < 0))
            json_array_append(out, (json_t *)r);
    }
    return out;
}

/* The lowercase text a run's use is looked for in: tool inputs (whole)
 * and the assistant's text. */
static char *haystack(const json_t *records, const evolve_trace *t)
{
    loom_str s = {0};
    size_t i;
    const json_t *r;
    json_array_foreach(records, i, r) {
        if (!strcmp(json_get_str(r, "type", ""), "function_call")) {
            str_puts(&s, json_get_str(r, "arguments", ""));
            str_putc(&s, '\n');
        }
    }
    str_puts(&s, t->text ? t->text : "");
    for (size_t k = 0; k < s.len; k++)
        s.ptr[k] = (char)tolower((unsigned char)s.ptr[k]);
    return s.len ? str_steal(&s) : xstrdup("");
}

static json_t *mis_injection(const char *root)
{
    json_t *lines = evolve_ledger_read(root, ".loom/mf/recall.jsonl", NULL);
    json_t *files = json_object(); /* session → its records (or null) */
    int items = 0, used = 0, runs = 0, missing = 0;
    json_t *by_kind = json_object();
    size_t i;
    json_t *line;
    json_array_foreach(lines, i, line) {
        const char *sid = json_get_str(line, "session", "");
        const char *ts = json_get_str(line, "ts", "");
        if (!*sid || !*ts)
            continue;
        json_t *recs = json_object_get(files, sid);
        if (!recs) {
            char *path = NULL;
            loom_error err;
            recs = json_null();
            /* Only a whole session id: session_find also takes a path
             * or a prefix, and the ledger is the repository's text (it
             * must not have Loom read ~/.ssh/id_rsa or another project's
             * session as this one's). */
            if (uuid_valid(sid) && session_find(sid, &path, &err) == 0) {
                loom_str why = {0};
                char *text = file_read_text(path, SESSION_MAX_BYTES, 0, &why);
                if (text) {
                    json_decref(recs);
                    recs = evolve_jsonl_parse(text, strlen(text), NULL);
                }
                free(text);
                str_free(&why);
            }
            free(path);
            json_object_set_new(files, sid, recs);
        }
        const json_t *list = json_get_arr(line, "items");
        if (!json_is_array(recs)) {
            missing += (int)json_array_size(list);
            continue;
        }
        /* The run ends where the session's next recall begins. */
        const char *until = NULL;
        for (size_t k = i + 1; k < json_array_size(lines) && !until; k++) {
            const json_t *nx = json_array_get(lines, k);
            if (!strcmp(json_get_str(nx, "session", ""), sid) &&
                strcmp(json_get_str(nx, "ts", ""), ts) > 0)
                until = json_get_str(nx, "ts", NULL);
        }
        json_t *win = window(recs, ts, until);
        evolve_trace t;
        evolve_trace_build(win, &t);
        char *hay = haystack(win, &t);
        runs++;
        size_t k;
        json_t *it;
        json_array_foreach(list, k, it) {
            if (!json_is_object(it))
                continue;
            const char *kind = json_get_str(it, "kind", "memory");
            json_t *kc = json_object_get(by_kind, kind);
            if (!kc) {
                kc = json_pack("{s:i,s:i}", "items", 0, "used", 0);
                json_object_set_new(by_kind, kind, kc);
            }
            bool u = item_used(root, it, &t, hay);
            items++;
            used += u;
            json_object_set_new(kc, "items", json_integer(json_get_int(kc, "items", 0) + 1));
            json_object_set_new(kc, "used", json_integer(json_get_int(kc, "used", 0) + u));
        }
        free(hay);
        evolve_trace_free(&t);
        json_decref(win);
    }
    json_decref(files);
    json_decref(lines);
    json_t *out = json_pack("{s:i,s:i,s:i,s:i,s:i,s:o}", "runs", runs, "items", items, "used", used,
                            "unused", items - used, "sessions_missing", missing, "by_kind", by_kind);
    /* Rounded to 4 places so the number reads the same everywhere. */
    json_object_set_new(out, "rate",
                        items ? json_real((double)(long)((double)(items - used) / items * 10000 + 0.5) /
                                          10000)
                              : json_null());
    return out;
}

json_t *evolve_run_metrics(const char *root, const char *run_id, const json_t *records)
{
    json_t *review = evolve_ledger_read(root, ".loom/mf/review.jsonl", NULL);
    int constraints, skills, agents;
    json_decref(growth(review, "constraint", &constraints));
    json_decref(growth(review, "skill", &skills));
    json_decref(growth(review, "agent", &agents));
    json_decref(review);
    json_t *lines = evolve_ledger_read(root, ".loom/mf/recall.jsonl", NULL);
    evolve_trace t;
    evolve_trace_build(records, &t);
    char *hay = haystack(records, &t);
    int items = 0, used = 0;
    size_t i, k;
    json_t *line, *it;
    json_array_foreach(lines, i, line) {
        if (strcmp(json_get_str(line, "run", ""), run_id) != 0)
            continue;
        json_array_foreach(json_get_arr(line, "items"), k, it) {
            if (!json_is_object(it))
                continue;
            items++;
            used += item_used(root, it, &t, hay);
        }
    }
    free(hay);
    evolve_trace_free(&t);
    json_decref(lines);
    return json_pack("{s:i,s:i,s:i,s:i,s:i}", "constraints_accepted", constraints,
                     "skills_accepted", skills, "agents_accepted", agents, "recalled", items,
                     "recalled_unused", items - used);
}

json_t *evolve_stats(const char *root, loom_error *err)
{
    (void)err;
    json_t *review = evolve_ledger_read(root, ".loom/mf/review.jsonl", NULL);
    int constraints, skills, agents;
    json_t *cd = growth(review, "constraint", &constraints);
    json_t *sd = growth(review, "skill", &skills);
    json_t *ad = growth(review, "agent", &agents);
    int proposed = 0, rejected = 0;
    size_t i;
    json_t *r;
    json_array_foreach(review, i, r) {
        proposed += !strcmp(json_get_str(r, "action", ""), "propose");
        rejected += !strcmp(json_get_str(r, "action", ""), "reject");
    }
    json_decref(review);
    return json_pack("{s:s,s:{s:i,s:o},s:{s:i,s:i,s:o,s:o},s:o,s:{s:i,s:i}}", "root", root,
                     "constraint_growth", "accepted", constraints, "by_day", cd,
                     "capability_growth", "skills_accepted", skills, "agents_accepted", agents,
                     "by_day", sd, "agents_by_day", ad, "mis_injection", mis_injection(root),
                     "proposals", "proposed", proposed, "rejected", rejected);
}
