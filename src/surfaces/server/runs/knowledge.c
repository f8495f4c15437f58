/* knowledge.c — knowledge search for loom serve (knowledge.h): the
 * filesystem sources are walked and every text line scored by the query's
 * terms; the best lines become the EvidencePack's citations. Other source
 * types are named in the pack's summary as not searchable here.
 *
 * Safety: a source's folder is opened once and walked with openat and
 * O_NOFOLLOW, so nothing outside it is reached through a path; a symbolic
 * link is followed only when it is a file whose real path is inside the
 * folder's real path (a folder link is never followed: no cycles). Dot
 * entries are skipped, so are files over 1 MB and binary files (a NUL in
 * the first 4 KB). The walk stops at a depth of 32 and after 20000 files.
 *
 * Owns nothing past a call. Threading: no state; any thread. */
#include "surfaces/server/runs/knowledge.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/str.h"
#include "base/uuid.h"

#define KB_FILE_MAX (1024 * 1024)
#define KB_SNIFF 4096
#define KB_SNIPPET_MAX 240
#define KB_DEPTH_MAX 32
#define KB_FILES_MAX 20000
#define KB_TERMS_MAX 32
#define KB_LIMIT_DEFAULT 5
#define KB_LIMIT_MAX 50

typedef struct kb_hit {
    int score;
    size_t source;          /* index into the sources */
    char *rel;              /* path inside the source */
    long line;              /* 1-based */
    char *text;             /* the line, as it is */
    char *title;
    time_t mtime;
} kb_hit;

typedef struct kb_search {
    char *terms[KB_TERMS_MAX];
    size_t n_terms;
    kb_hit *top;            /* the best `limit`, best first */
    size_t n_top, limit;
    size_t files_seen;
} kb_search;

static void hit_clear(kb_hit *h)
{
    free(h->rel), free(h->text), free(h->title);
    memset(h, 0, sizeof *h);
}

/* Better first: higher score, then source order, path, line. */
static int hit_cmp(const kb_hit *a, const kb_hit *b)
{
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    if (a->source != b->source)
        return a->source < b->source ? -1 : 1;
    int c = strcmp(a->rel, b->rel);
    if (c)
        return c;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* "cit_"/"evp_" + 26 base32 digits of a UUIDv7. */
static char *id_new(const char *prefix)
{
    static const char digits[] = "0123456789abcdefghjkmnpqrstvwxyz";
    char u[UUID_STR_LEN];
    uuid_v7(u);
    unsigned char b[16] = {0};
    size_t nb = 0;
    for (const char *p = u; p[0] && p[1] && nb < 16; p++) {
        if (*p == '-')
            continue;
        b[nb++] = (unsigned char)((str_hex_digit(p[0]) << 4) | str_hex_digit(p[1]));
        p++;
    }
    loom_str o = LOOM_STR_INIT;
    str_puts(&o, prefix);
    for (int i = 0; i < 26; i++) {
        int v = 0;
        for (int k = 0, bit = i * 5; k < 5; k++, bit++)
            v = (v << 1) | (bit < 128 ? (b[bit / 8] >> (7 - bit % 8)) & 1 : 0);
        str_putc(&o, digits[v]);
    }
    return str_steal(&o);
}

/* Lowercase terms split at anything that is not a letter, digit, '_' or
 * '-' (bytes >= 0x80 are kept: words in other scripts stay whole);
 * duplicates dropped. */
static void split_terms(const char *q, kb_search *s)
{
    const unsigned char *p = (const unsigned char *)q;
    while (*p && s->n_terms < KB_TERMS_MAX) {
        while (*p && !(isalnum(*p) || *p == '_' || *p == '-' || *p >= 0x80))
            p++;
        const unsigned char *st = p;
        while (*p && (isalnum(*p) || *p == '_' || *p == '-' || *p >= 0x80))
            p++;
        if (p == st)
            continue;
        char *t = xstrndup((const char *)st, (size_t)(p - st));
        for (char *c = t; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        bool dup = false;
        for (size_t i = 0; i < s->n_terms; i++)
            dup = dup || strcmp(s->terms[i], t) == 0;
        if (dup)
            free(t);
        else
            s->terms[s->n_terms++] = t;
    }
}

/* The file's first markdown heading ("# Title"), or NULL. */
static char *heading_of(const char *data, size_t len)
{
    for (const char *line = data; line && line < data + len;) {
        const char *nl = memchr(line, '\n', (size_t)(data + len - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(data + len - line);
        size_t h = 0;
        while (h < n && line[h] == '#')
            h++;
        if (h >= 1 && h <= 6 && h < n && line[h] == ' ') {
            const char *t = line + h;
            size_t tn = n - h;
            while (tn && isspace((unsigned char)*t))
                t++, tn--;
            while (tn && isspace((unsigned char)t[tn - 1]))
                tn--;
            if (tn)
                return xstrndup(t, tn);
        }
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

/* Offers a hit to the top list (which keeps only the best s->limit). */
static void offer(kb_search *s, kb_hit *h)
{
    if (s->n_top == s->limit && hit_cmp(h, &s->top[s->n_top - 1]) >= 0) {
        hit_clear(h);
        return;
    }
    if (s->n_top == s->limit)
        hit_clear(&s->top[--s->n_top]);
    size_t i = s->n_top;
    while (i > 0 && hit_cmp(h, &s->top[i - 1]) < 0) {
        s->top[i] = s->top[i - 1];
        i--;
    }
    s->top[i] = *h;
    s->n_top++;
    memset(h, 0, sizeof *h);
}

static void score_file(kb_search *s, size_t source, const char *rel, const char *name,
                       const char *data, size_t len, time_t mtime)
{
    char *title = NULL;
    bool titled = false;
    char *low = NULL;
    size_t cap = 0;
    long lineno = 0;
    for (const char *line = data; line && line < data + len;) {
        const char *nl = memchr(line, '\n', (size_t)(data + len - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(data + len - line);
        lineno++;
        if (n + 1 > cap) {
            cap = n + 1;
            low = xrealloc(low, cap);
        }
        for (size_t i = 0; i < n; i++)
            low[i] = (char)tolower((unsigned char)line[i]);
        low[n] = 0;
        int score = 0;
        for (size_t t = 0; t < s->n_terms; t++)
            if (strstr(low, s->terms[t]))
                score++;
        if (score > 0) {
            if (!titled) {
                title = heading_of(data, len);
                if (!title)
                    title = xstrdup(name);
                titled = true;
            }
            kb_hit h = {score, source, xstrdup(rel), lineno, xstrndup(line, n),
                        xstrdup(title), mtime};
            offer(s, &h);
        }
        line = nl ? nl + 1 : NULL;
    }
    free(low);
    free(title);
}

/* Reads an open regular file (fd, closed here) when it is text and at most
 * 1 MB, and scores it. */
static void scan_fd(kb_search *s, size_t source, const char *rel, const char *name, int fd)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > KB_FILE_MAX) {
        close(fd);
        return;
    }
    size_t want = (size_t)st.st_size, got = 0;
    char *data = xmalloc(want + 1);
    while (got < want) {
        ssize_t r = read(fd, data + got, want - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    data[got] = 0;
    s->files_seen++;
    if (memchr(data, 0, got < KB_SNIFF ? got : KB_SNIFF) == NULL)
        score_file(s, source, rel, name, data, got, st.st_mtime);
    free(data);
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Walks the folder open as dfd (closed here); rel is its path inside the
 * source ("" at the top), root_real the source's real path. */
static void walk(kb_search *s, size_t source, const char *root_real, int dfd, const char *rel,
                 int depth)
{
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue; /* ".", "..", dot-files and dot-folders (.git) */
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[n++] = xstrdup(e->d_name);
    }
    /* Sorted, so equal scores come out in the same order every time. */
    if (n)
        qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n; i++) {
        if (s->files_seen >= KB_FILES_MAX)
            break;
        loom_str sub = LOOM_STR_INIT;
        str_printf(&sub, "%s%s%s", rel, rel[0] ? "/" : "", names[i]);
        struct stat st;
        if (fstatat(dirfd(d), names[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
            str_free(&sub);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth < KB_DEPTH_MAX) {
                int cfd = openat(dirfd(d), names[i],
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (cfd >= 0)
                    walk(s, source, root_real, cfd, str_cstr(&sub), depth + 1);
            }
        } else if (S_ISREG(st.st_mode)) {
            int fd = openat(dirfd(d), names[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd >= 0)
                scan_fd(s, source, str_cstr(&sub), names[i], fd);
        } else if (S_ISLNK(st.st_mode)) {
            /* Followed only to a file inside the source's folder. */
            loom_str full = LOOM_STR_INIT;
            str_printf(&full, "%s/%s", root_real, str_cstr(&sub));
            char real[PATH_MAX];
            size_t rl = strlen(root_real);
            if (realpath(str_cstr(&full), real) && strncmp(real, root_real, rl) == 0 &&
                real[rl] == '/') {
                int fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
                if (fd >= 0)
                    scan_fd(s, source, str_cstr(&sub), names[i], fd);
            }
            str_free(&full);
        }
        str_free(&sub);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    closedir(d);
}

/* The line trimmed and cut to 240 bytes at a character boundary. */
static char *snippet_of(const char *line)
{
    while (*line && isspace((unsigned char)*line))
        line++;
    size_t n = strlen(line);
    while (n && isspace((unsigned char)line[n - 1]))
        n--;
    if (n > KB_SNIPPET_MAX) {
        n = KB_SNIPPET_MAX;
        while (n && ((unsigned char)line[n] & 0xC0) == 0x80)
            n--;
    }
    return xstrndup(line, n);
}

static bool is_fs(const knowledge_source *k)
{
    return k->type && strcmp(k->type, "filesystem") == 0;
}

/* Searches one filesystem source; a note for the summary when its folder
 * cannot be opened. */
static void search_source(kb_search *s, size_t idx, const knowledge_source *k, loom_str *notes)
{
    char real[PATH_MAX];
    if (!k->path || !realpath(k->path, real)) {
        str_printf(notes, " %s's folder %s cannot be read.", k->id,
                   k->path ? k->path : "(none)");
        return;
    }
    int dfd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        str_printf(notes, " %s's folder %s cannot be read.", k->id, k->path);
        return;
    }
    walk(s, idx, real, dfd, "", 0);
}

static char *pack_json(const knowledge_source *const *sources, const char *query,
                       const char *run_id, kb_search *s, const char *summary)
{
    json_t *cits = json_array();
    time_t newest = 0;
    for (size_t i = 0; i < s->n_top; i++) {
        kb_hit *h = &s->top[i];
        const knowledge_source *k = sources[h->source];
        loom_str uri = LOOM_STR_INIT;
        str_printf(&uri, "kb://%s/%s#L%ld", k->id, h->rel, h->line);
        char *cid = id_new("cit_");
        char *snip = k->allow_quote ? snippet_of(h->text) : xstrdup("");
        json_array_append_new(
            cits, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:b}", "citation_id", cid,
                            "source", k->id, "uri", str_cstr(&uri), "title", h->title,
                            "snippet", snip, "line", (json_int_t)h->line, "trust_tier",
                            k->trust_tier ? k->trust_tier : "medium", "quotable",
                            k->allow_quote));
        free(cid), free(snip);
        str_free(&uri);
        if (h->mtime > newest)
            newest = h->mtime;
    }
    json_t *fresh = json_null();
    if (s->n_top) {
        struct tm tm;
        char day[16];
        gmtime_r(&newest, &tm);
        strftime(day, sizeof day, "%Y-%m-%d", &tm);
        fresh = json_string(day);
    }
    double conf = 0;
    if (s->n_top && s->n_terms)
        conf = (double)s->top[0].score / (double)s->n_terms;
    if (conf > 1)
        conf = 1;
    char *pid = id_new("evp_");
    json_t *o = json_pack("{s:s, s:s?, s:s, s:s, s:o, s:f, s:o}", "evidence_pack_id", pid,
                          "run_id", run_id, "question", query, "summary", summary,
                          "citations", cits, "confidence", conf, "freshness", fresh);
    free(pid);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return text;
}

char *knowledge_search(const knowledge_source *const *sources, size_t n, const char *query,
                       int limit, const char *run_id, srv_error *err)
{
    kb_search s = {0};
    if (query)
        split_terms(query, &s);
    if (s.n_terms == 0) {
        srv_fail(err, LOOM_ERR_INVALID_REQUEST, "query: needs at least one word to search for");
        return NULL;
    }
    /* Every source is checked before any is read: a denied one fails the
     * whole search, naming it. */
    for (size_t i = 0; i < n; i++) {
        if (sources[i] && !sources[i]->allow_search) {
            for (size_t t = 0; t < s.n_terms; t++)
                free(s.terms[t]);
            srv_fail(err, LOOM_ERR_KNOWLEDGE_SOURCE_DENIED,
                     "knowledge source %s does not allow search (retrieval_policy.allow_search "
                     "is false)", sources[i]->id ? sources[i]->id : "?");
            return NULL;
        }
    }
    s.limit = limit <= 0 ? KB_LIMIT_DEFAULT : limit > KB_LIMIT_MAX ? KB_LIMIT_MAX : (size_t)limit;
    s.top = xcalloc(s.limit, sizeof *s.top);
    loom_str notes = LOOM_STR_INIT, searched = LOOM_STR_INIT;
    size_t n_fs = 0;
    for (size_t i = 0; i < n; i++) {
        const knowledge_source *k = sources[i];
        if (!k)
            continue;
        if (is_fs(k)) {
            str_printf(&searched, "%s%s", n_fs ? ", " : "", k->id);
            n_fs++;
            search_source(&s, i, k, &notes);
        } else {
            str_printf(&notes, " %s (%s) is not searchable by this server.", k->id,
                       k->type ? k->type : "unknown type");
        }
    }
    loom_str sum = LOOM_STR_INIT;
    if (n_fs == 0)
        str_puts(&sum, "No filesystem knowledge source was searched.");
    else if (s.n_top == 0)
        str_printf(&sum, "No line of %s matches the query.", str_cstr(&searched));
    else
        str_printf(&sum, "%zu line%s from %s match the query (best: %d of %zu terms).",
                   s.n_top, s.n_top == 1 ? "" : "s", str_cstr(&searched), s.top[0].score,
                   s.n_terms);
    str_puts(&sum, str_cstr(&notes));
    char *out = pack_json(sources, query, run_id, &s, str_cstr(&sum));
    str_free(&sum), str_free(&notes), str_free(&searched);
    for (size_t i = 0; i < s.n_top; i++)
        hit_clear(&s.top[i]);
    free(s.top);
    for (size_t t = 0; t < s.n_terms; t++)
        free(s.terms[t]);
    if (!out)
        srv_fail(err, LOOM_ERR_INTERNAL, "knowledge search: the evidence pack could not be made");
    return out;
}
