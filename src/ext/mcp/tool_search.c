/* tool_search.c — the ToolSearch tool over the manager's deferred MCP
 * tools: the ranking (pure), its description, and the call that returns
 * the hits' declarations and marks them found (see tool_search.h).
 *
 * Owns the heap tool_def and its description. Threading: the ranking and
 * the description are pure; run may be called from any thread.
 */
#include "ext/mcp/tool_search.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "ext/mcp/manager.h"
#include "ext/mcp/mcp_tool.h"

/* Keywords considered in one query; more are ignored. */
#define TS_MAX_TERMS 16
/* A hostile pattern backtracks for ever without a limit. */
#define TS_REGEX_MATCH_LIMIT 100000

typedef struct ts_hit {
    size_t index;
    int score;
} ts_hit;

static int hit_cmp(const void *a, const void *b)
{
    const ts_hit *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static char *lower_dup(const char *s)
{
    char *d = xstrdup(s ? s : "");
    for (char *p = d; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

static size_t clamp_max(size_t max)
{
    if (max == 0)
        return TOOL_SEARCH_DEFAULT_RESULTS;
    return max > TOOL_SEARCH_MAX_RESULTS ? TOOL_SEARCH_MAX_RESULTS : max;
}

/* select:A,B — exact names, in the order asked, each once. */
/* Ranks the hits and writes the indexes of the best max to out; frees
 * hits. Returns how many were written. */
static int take_best(ts_hit *hits, size_t nh, size_t max, size_t *out)
{
    qsort(hits, nh, sizeof *hits, hit_cmp);
    size_t k = nh < max ? nh : max;
    for (size_t i = 0; i < k; i++)
        out[i] = hits[i].index;
    free(hits);
    return (int)k;
}

static int rank_select(const tool_search_entry *v, size_t n, const char *list, size_t *out)
{
    int k = 0;
    const char *p = list;
    while (*p && k < TOOL_SEARCH_MAX_RESULTS) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *end = e;
        while (end > p && isspace((unsigned char)end[-1]))
            end--;
        size_t len = (size_t)(end - p);
        for (size_t i = 0; len && i < n; i++) {
            if (strlen(v[i].name) != len || strncmp(v[i].name, p, len) != 0)
                continue;
            bool dup = false;
            for (int j = 0; j < k; j++)
                dup |= out[j] == i;
            if (!dup)
                out[k++] = i;
            break;
        }
        p = e;
    }
    return k;
}

static int rank_regex(const tool_search_entry *v, size_t n, const char *pat, size_t plen,
                      size_t max, size_t *out, loom_error *err)
{
    int ec;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, plen,
                                   PCRE2_CASELESS | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec,
                                   &off, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(ec, msg, sizeof msg);
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "The regex /%.*s/ is invalid at offset %zu: %s", (int)plen, pat,
                              (size_t)off, (const char *)msg);
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    pcre2_match_context *mc = pcre2_match_context_create(NULL);
    pcre2_set_match_limit(mc, TS_REGEX_MATCH_LIMIT);
    ts_hit *hits = xcalloc(n ? n : 1, sizeof *hits);
    size_t nh = 0;
    for (size_t i = 0; i < n; i++) {
        const char *d = v[i].description ? v[i].description : "";
        int score = 0;
        if (pcre2_match(re, (PCRE2_SPTR)v[i].name, strlen(v[i].name), 0, 0, md, mc) >= 0)
            score += 2;
        if (pcre2_match(re, (PCRE2_SPTR)d, strlen(d), 0, 0, md, mc) >= 0)
            score += 1;
        if (score)
            hits[nh++] = (ts_hit){i, score};
    }
    pcre2_match_context_free(mc);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return take_best(hits, nh, max, out);
}

typedef struct ts_terms {
    char *word[TS_MAX_TERMS];
    bool required[TS_MAX_TERMS];
    size_t n;
} ts_terms;

static void terms_split(ts_terms *t, const char *query)
{
    char *q = lower_dup(query);
    t->n = 0;
    for (char *save = NULL, *w = strtok_r(q, " \t\r\n", &save); w && t->n < TS_MAX_TERMS;
         w = strtok_r(NULL, " \t\r\n", &save)) {
        bool req = *w == '+';
        if (req)
            w++;
        if (!*w)
            continue;
        t->required[t->n] = req;
        t->word[t->n++] = xstrdup(w);
    }
    free(q);
}

static void terms_free(ts_terms *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->word[i]);
    t->n = 0;
}

/* The entry's score for the terms; -1 when a required word is missing. */
static int score_entry(const tool_search_entry *e, const ts_terms *t)
{
    char *name = lower_dup(e->name), *desc = lower_dup(e->description);
    int score = 0;
    for (size_t i = 0; i < t->n && score >= 0; i++) {
        bool in_name = strstr(name, t->word[i]) != NULL;
        bool in_desc = strstr(desc, t->word[i]) != NULL;
        if (t->required[i] && !in_name && !in_desc)
            score = -1;
        else
            score += (in_name ? 2 : 0) + (in_desc ? 1 : 0) + (strcmp(name, t->word[i]) ? 0 : 10);
    }
    free(name);
    free(desc);
    return score;
}

int tool_search_rank(const tool_search_entry *v, size_t n, const char *query, size_t max,
                     size_t *out, loom_error *err)
{
    max = clamp_max(max);
    while (query && isspace((unsigned char)*query))
        query++;
    size_t qlen = query ? strlen(query) : 0;
    while (qlen && isspace((unsigned char)query[qlen - 1]))
        qlen--;
    if (qlen == 0)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "The query is empty");
    if (qlen > 7 && strncmp(query, "select:", 7) == 0) {
        char *list = xstrndup(query + 7, qlen - 7);
        int k = rank_select(v, n, list, out); /* every name asked for: max does not apply */
        free(list);
        return k;
    }
    if (qlen >= 2 && query[0] == '/' && query[qlen - 1] == '/')
        return rank_regex(v, n, query + 1, qlen - 2, max, out, err);
    char *q = xstrndup(query, qlen);
    ts_terms t;
    terms_split(&t, q);
    free(q);
    ts_hit *hits = xcalloc(n ? n : 1, sizeof *hits);
    size_t nh = 0;
    for (size_t i = 0; i < n; i++) {
        int s = score_entry(&v[i], &t);
        if (s > 0)
            hits[nh++] = (ts_hit){i, s};
    }
    terms_free(&t);
    return take_best(hits, nh, max, out);
}

/* ---- the tool ----------------------------------------------------------- */

static const char ts_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"query\":{\"type\":\"string\",\"description\":\"Keywords (+word: required), /regex/, or "
    "select:NAME[,NAME...] for exact names.\"},"
    "\"max_results\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"How many tools to "
    "return (default 5, at most 20).\"}},"
    "\"required\":[\"query\"],\"additionalProperties\":false}";

static const char ts_intro[] =
    "Finds deferred tools and loads their definitions. Some MCP tools are not declared yet, to "
    "keep requests small; they are listed below by name. Search them by keywords (a match in the "
    "name counts twice one in the description; +word requires a word), by /regex/ over names and "
    "descriptions, or pick them with select:NAME[,NAME...]. Each hit comes back with its "
    "description and input schema, and can be called from then on.";

/* The most deferred tools listed by name: a server with thousands of tools
 * would otherwise put them all in every request (5 000 names are ~27 000
 * tokens), the cost deferring is there to avoid. The rest are found by
 * keyword or /regex/ all the same. */
#define TS_LIST_MAX 300

char *tool_search_description(const char *const *names, size_t n)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, ts_intro);
    str_puts(&s, "\n\nDeferred tools (call ToolSearch to load their schemas): ");
    for (size_t i = 0; i < n && i < TS_LIST_MAX; i++) {
        if (i)
            str_puts(&s, ", ");
        str_puts(&s, names[i] ? names[i] : "");
    }
    if (n > TS_LIST_MAX)
        str_printf(&s, ", and %zu more (search by keyword or /regex/)", n - TS_LIST_MAX);
    if (n == 0)
        str_puts(&s, "(none)");
    return str_steal(&s);
}

static void put_hit(loom_str *out, const mcp_tool *t)
{
    json_t *o = json_pack("{s:s, s:s, s:O}", "name", t->loom_name, "description",
                          t->description ? t->description : "", "input_schema",
                          t->input_schema ? t->input_schema : json_object());
    str_puts(out, "<function>");
    if (o)
        json_dump_compact_into(out, o, 0);
    str_puts(out, "</function>\n");
    json_decref(o);
}

/* For select: the names asked for that are not deferred tools. */
static void note_unselected(loom_str *out, const char *query, const tool_search_entry *v,
                            const size_t *idx, size_t k)
{
    while (isspace((unsigned char)*query))
        query++;
    if (strncmp(query, "select:", 7) != 0)
        return;
    char *list = xstrdup(query + 7);
    bool first = true;
    for (char *save = NULL, *w = strtok_r(list, ", \t\r\n", &save); w;
         w = strtok_r(NULL, ", \t\r\n", &save)) {
        bool found = false;
        for (size_t i = 0; i < k && !found; i++)
            found = strcmp(v[idx[i]].name, w) == 0;
        if (found)
            continue;
        str_puts(out, first ? "\nNot a deferred tool (already declared, or no such tool): "
                            : ", ");
        str_printf(out, "%.100s", w);
        first = false;
    }
    free(list);
}

static int ts_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    struct mcp_manager *m = ctx && ctx->self ? ctx->self->impl : NULL;
    const char *query = json_get_str(input, "query", NULL);
    int64_t max = json_get_int(input, "max_results", TOOL_SEARCH_DEFAULT_RESULTS);
    if (!query)
        return tool_error(out, "ToolSearch needs a query");
    size_t n = 0;
    const mcp_tool **d = m ? mcp_manager_deferred(m, &n) : NULL;
    tool_search_entry *v = xcalloc(n ? n : 1, sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = (tool_search_entry){d[i]->loom_name, d[i]->description};
    size_t idx[TOOL_SEARCH_MAX_RESULTS];
    loom_error err;
    loom_error_clear(&err);
    int k = tool_search_rank(v, n, query, max < 1 ? 1 : (size_t)max, idx, &err);
    if (k < 0) {
        free(v);
        free(d);
        return tool_error(out, "%s", err.message);
    }
    if (k == 0) {
        str_printf(&out->text, "No deferred tool matches \"%s\" (%zu deferred tools).", query, n);
    } else {
        const char *names[TOOL_SEARCH_MAX_RESULTS];
        str_printf(&out->text, "%d tool%s found; %s be called from now on:\n<functions>\n", k,
                   k == 1 ? "" : "s", k == 1 ? "it can" : "they can");
        for (int i = 0; i < k; i++) {
            put_hit(&out->text, d[idx[i]]);
            names[i] = d[idx[i]]->loom_name;
        }
        str_puts(&out->text, "</functions>");
        mcp_manager_load_deferred(m, names, (size_t)k);
    }
    note_unselected(&out->text, query, v, idx, (size_t)k);
    out->raw = json_pack("{s:i, s:i}", "matches", k, "deferred", (int)n);
    free(v);
    free(d);
    return 0;
}

tool_def *tool_search_new(struct mcp_manager *m)
{
    size_t n = 0;
    const mcp_tool **d = mcp_manager_deferred(m, &n);
    const char **names = xcalloc(n ? n : 1, sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = d[i]->loom_name;
    tool_def *def = xcalloc(1, sizeof *def);
    def->name = TOOL_SEARCH_NAME;
    def->description = tool_search_description(names, n);
    def->input_schema = ts_schema;
    def->read_only = true;
    def->concurrency_safe = true;
    def->local_state_only = true; /* it only marks tools found in the manager */
    def->run = ts_run;
    def->impl = m;
    free(names);
    free(d);
    return def;
}

void tool_search_free(tool_def *d)
{
    if (!d)
        return;
    free((char *)d->description);
    free(d);
}

bool tool_search_should_defer(int64_t mcp_tokens, int64_t builtin_tokens, int64_t window,
                              double share)
{
    if (mcp_tokens <= 0 || window <= 0 || !(share > 0))
        return false;
    if (builtin_tokens < 0)
        builtin_tokens = 0;
    return (double)(mcp_tokens + builtin_tokens) > share * (double)window;
}
