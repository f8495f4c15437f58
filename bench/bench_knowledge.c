/* bench_knowledge.c — the knowledge index's figures (ext/knowledge/
 * fs_index.h) over a generated fixture of N text files (default 10,000,
 * each four paragraphs: two common words and seven of a 5,000-word tail
 * per line):
 *   index      the first refresh: walk, read, chunk, insert (FTS5)
 *   refresh    a second refresh with nothing changed (stat only)
 *   touch      a refresh after 1% of the files changed
 *   query      one search (a common word and two tail words; BM25, 24
 *              passages), median over Q queries
 * Figures only: nothing here asserts a time (DESIGN §7). Single-threaded.
 *
 * usage: bench_knowledge DIR [FILES (10000)] [QUERIES (200)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/str.h"
#include "ext/knowledge/fs_index.h"

static const char *const WORDS[] = {
    "deploy", "rollback", "latency", "region", "failover", "cache",  "quota",   "token",
    "schema", "migration", "replica", "shard", "backup",  "restore", "metric", "alert",
    "budget", "incident", "runbook", "owner", "service", "gateway", "queue",   "worker",
    "limit",  "timeout",  "retry",   "canary", "release", "feature", "flag",   "audit"};
#define NWORDS (sizeof WORDS / sizeof *WORDS)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void write_file(const char *path, unsigned seed)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fprintf(f, "# Page %u\n\n", seed);
    for (int p = 0; p < 4; p++) {
        for (int l = 0; l < 3; l++) {
            /* Two common words and seven of a 5,000-word tail, as prose has. */
            for (int w = 0; w < 2; w++)
                fprintf(f, "%s ", WORDS[(seed * 7 + p * 13 + l * 5 + w * 11) % NWORDS]);
            for (int w = 0; w < 7; w++)
                fprintf(f, "k%04u ", (seed * 31 + p * 17 + l * 7 + w * 1013) % 5000);
            fprintf(f, "%u\n", seed + p + l);
        }
        fputc('\n', f);
    }
    fclose(f);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_knowledge DIR [FILES] [QUERIES]\n");
        return 2;
    }
    const char *dir = argv[1];
    int files = argc > 2 ? atoi(argv[2]) : 10000, queries = argc > 3 ? atoi(argv[3]) : 200;
    char docs[4096], db[4096], path[4200];
    snprintf(docs, sizeof docs, "%s/docs", dir);
    snprintf(db, sizeof db, "%s/index.db", dir);
    mkdir(docs, 0700);
    for (int i = 0; i < files; i++) {
        if (i % 100 == 0) {
            snprintf(path, sizeof path, "%s/d%03d", docs, i / 100);
            mkdir(path, 0700);
        }
        snprintf(path, sizeof path, "%s/d%03d/f%05d.md", docs, i / 100, i);
        write_file(path, (unsigned)i);
    }
    char *paths[2] = {docs, NULL};
    knowledge_src src = {.id = "bench", .type = KSRC_FILESYSTEM, .paths = paths,
                         .trust_tier = "medium", .scope = "global", .allow_search = true,
                         .allow_quote = true};
    loom_error err = {0};
    fs_refresh_stats st;
    double t0 = now_ms();
    if (fs_index_refresh(db, &src, &st, &err) != 0) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    double t_index = now_ms() - t0;
    size_t chunks = st.chunks_added;
    t0 = now_ms();
    fs_index_refresh(db, &src, &st, &err);
    double t_refresh = now_ms() - t0;
    sleep(1); /* a new mtime second, so the change is seen */
    for (int i = 0; i < files; i += 100) {
        snprintf(path, sizeof path, "%s/d%03d/f%05d.md", docs, i / 100, i);
        write_file(path, (unsigned)i + 1);
    }
    t0 = now_ms();
    fs_index_refresh(db, &src, &st, &err);
    double t_touch = now_ms() - t0;
    size_t touched = st.files_indexed;
    double *q = calloc((size_t)queries, sizeof *q);
    size_t hits = 0;
    for (int i = 0; i < queries; i++) {
        char text[128];
        snprintf(text, sizeof text, "%s k%04d k%04d", WORDS[i % NWORDS], (i * 37) % 5000,
                 (i * 101 + 7) % 5000);
        fs_hit *h = NULL;
        size_t n = 0;
        t0 = now_ms();
        fs_index_query(db, &src, text, 24, &h, &n, &err);
        q[i] = now_ms() - t0;
        hits += n;
        fs_hits_free(h, n);
    }
    qsort(q, (size_t)queries, sizeof *q, cmp_double);
    struct stat dbst;
    stat(db, &dbst);
    printf("knowledge index: %d files, %zu chunks, database %lld KiB\n", files, chunks,
           (long long)dbst.st_size / 1024);
    printf("  index (first refresh)   %8.1f ms\n", t_index);
    printf("  refresh, nothing changed %7.1f ms\n", t_refresh);
    printf("  refresh, %zu files changed %6.1f ms\n", touched, t_touch);
    printf("  query (median of %d)     %7.2f ms  (p90 %.2f ms, %.1f passages each)\n", queries,
           q[queries / 2], q[queries * 9 / 10], queries ? (double)hits / queries : 0);
    free(q);
    return 0;
}
