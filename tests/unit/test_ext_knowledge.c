/* test_ext_knowledge.c — external knowledge's parts on their own
 * (ext/knowledge): the registry's shape checks and defaults, the citation
 * policy's matching, max_age parsing, yaml_mapping_parse's own lines; the
 * FTS5 index's chunks, line ranges and incremental refresh (unchanged
 * files not read again, changed ones replaced, vanished ones dropped);
 * the evidence builder's conflict rule and restricted-evidence mode (no
 * run of a summary-only source's text in the pack). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/frontmatter.h"
#include "base/str.h"
#include "ext/knowledge/evidence.h"
#include "ext/knowledge/fs_index.h"
#include "ext/knowledge/registry.h"

static knowledge_registry *parse(const char *yaml, loom_error *err)
{
    json_t *doc = yaml_mapping_parse(yaml, strlen(yaml), err);
    if (!doc)
        return NULL;
    knowledge_registry *r = knowledge_registry_new();
    int rc = knowledge_registry_add_json(r, doc, "ks.yaml", "/base", err);
    json_decref(doc);
    if (rc != 0) {
        knowledge_registry_free(r);
        return NULL;
    }
    return r;
}

static void refused(const char *yaml, const char *needle)
{
    loom_error err = {0};
    knowledge_registry *r = parse(yaml, &err);
    if (r)
        fail_msg("accepted: %s", yaml);
    if (!strstr(err.message, needle))
        fail_msg("message [%s] lacks [%s]", err.message, needle);
}

static void test_registry_reads_sources_with_defaults(void **state)
{
    (void)state;
    loom_error err = {0};
    knowledge_registry *r = parse("knowledge_sources:\n"
                                  "  docs:\n    type: filesystem\n    path: docs\n"
                                  "  wiki:\n    type: internal_wiki\n    endpoint: http://127.0.0.1:9/s\n    trust_tier: low\n"
                                  "    retrieval_policy: {allow_quote: false}\n"
                                  "    freshness: {max_age: 2d}\n"
                                  "citation_policy:\n  require_citation_for: [low]\n",
                                  &err);
    assert_non_null(r);
    assert_int_equal(r->n, 2);
    const knowledge_src *d = knowledge_registry_find(r, "docs");
    assert_string_equal(d->paths[0], "/base/docs");
    assert_string_equal(d->trust_tier, "medium");
    assert_string_equal(d->scope, "global");
    assert_true(d->allow_search && d->allow_quote);
    const knowledge_src *w = knowledge_registry_find(r, "wiki");
    assert_int_equal(w->max_age_s, 2 * 86400);
    assert_false(knowledge_src_quotable(r, w));
    assert_true(knowledge_src_quotable(r, d));
    assert_true(knowledge_src_requires_citation(r, w));
    assert_false(knowledge_src_requires_citation(r, d));
    knowledge_registry_free(r);
}

static void test_registry_refuses_bad_shapes_naming_the_key(void **state)
{
    (void)state;
    refused("knowledge_sources:\n  d:\n    type: filesystem\n", "needs path");
    refused("knowledge_sources:\n  d:\n    type: ftp\n", "knowledge_sources.d.type");
    refused("knowledge_sources:\n  d:\n    path: x\n", "type: required");
    refused("knowledge_sources:\n  d:\n    type: web\n    trust: high\n", "unknown key \"trust\"");
    refused("knowledge_sources:\n  d:\n    type: web\n    trust_tier: extreme\n", "trust_tier");
    refused("knowledge_sources:\n  d:\n    type: web\n    freshness: {max_age: soon}\n",
            "freshness");
    refused("knowledge_sources:\n  d:\n    type: web\n    retrieval_policy: {allow_search: "
            "maybe}\n", "retrieval_policy");
    refused("knowledge_sources:\n  d:\n    type: web\n    scope: tenant\n", "tenant needs tenant");
    refused("sources: {}\n", "unknown top-level key");
    refused("citation_policy: {quote: [a]}\n", "unknown key \"quote\"");
    refused("knowledge_sources: [a, b]\n", "mapping of source ids");
    /* The YAML reader's own refusals name the file's line. */
    loom_error err = {0};
    assert_null(yaml_mapping_parse("a: 1\nb: *x\n", 11, &err));
    assert_non_null(strstr(err.message, "line 2"));
}

static void test_max_age_units(void **state)
{
    (void)state;
    assert_int_equal(knowledge_parse_age("45"), 45);
    assert_int_equal(knowledge_parse_age("45s"), 45);
    assert_int_equal(knowledge_parse_age("3m"), 180);
    assert_int_equal(knowledge_parse_age("2h"), 7200);
    assert_int_equal(knowledge_parse_age("1d"), 86400);
    assert_int_equal(knowledge_parse_age("1w"), -1);
    assert_int_equal(knowledge_parse_age("-1"), -1);
    assert_int_equal(knowledge_parse_age(""), -1);
}

static char dir[64];

static void put(const char *rel, const char *text)
{
    char p[200];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static knowledge_src fs_source(const char *sub, char **paths)
{
    static char root[128];
    snprintf(root, sizeof root, "%s/%s", dir, sub);
    paths[0] = root;
    paths[1] = NULL;
    return (knowledge_src){.id = "docs", .type = KSRC_FILESYSTEM, .paths = paths,
                           .trust_tier = "high", .scope = "global", .allow_search = true,
                           .allow_quote = true};
}

static void test_index_chunks_lines_and_refreshes_incrementally(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/loom-kn-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char sub[100], db[100];
    snprintf(sub, sizeof sub, "%s/docs", dir);
    snprintf(db, sizeof db, "%s/index.db", dir);
    mkdir(sub, 0700);
    put("docs/a.md", "# Title\n\nalpha beta\ngamma delta\n\nomega line\n");
    put("docs/b.md", "nothing relevant\n");
    char *paths[2];
    knowledge_src s = fs_source("docs", paths);
    fs_refresh_stats st;
    loom_error err = {0};
    assert_int_equal(fs_index_refresh(db, &s, &st, &err), 0);
    assert_int_equal(st.files_seen, 2);
    assert_int_equal(st.files_indexed, 2);
    assert_int_equal(st.chunks_added, 4);
    fs_hit *h;
    size_t n;
    assert_int_equal(fs_index_query(db, &s, "gamma", 10, &h, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(h[0].line_start, 3);
    assert_int_equal(h[0].line_end, 4);
    assert_string_equal(h[0].text, "alpha beta\ngamma delta");
    fs_hits_free(h, n);
    /* Unchanged: nothing is read again. */
    assert_int_equal(fs_index_refresh(db, &s, &st, &err), 0);
    assert_int_equal(st.files_indexed, 0);
    /* Changed (size differs): its chunks are replaced. */
    put("docs/b.md", "now gamma is here too, longer\n");
    assert_int_equal(fs_index_refresh(db, &s, &st, &err), 0);
    assert_int_equal(st.files_indexed, 1);
    assert_int_equal(fs_index_query(db, &s, "gamma", 10, &h, &n, &err), 0);
    assert_int_equal(n, 2);
    fs_hits_free(h, n);
    /* Vanished: dropped. */
    char p[200];
    snprintf(p, sizeof p, "%s/docs/a.md", dir);
    unlink(p);
    assert_int_equal(fs_index_refresh(db, &s, &st, &err), 0);
    assert_int_equal(st.files_dropped, 1);
    assert_int_equal(fs_index_query(db, &s, "omega", 10, &h, &n, &err), 0);
    assert_int_equal(n, 0);
    fs_hits_free(h, n);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static evidence_hit mk_hit(const knowledge_src *src, const char *path, const char *text, bool q)
{
    return (evidence_hit){.hit = {.path = xstrdup(path), .line_start = 1, .line_end = 1,
                                  .text = xstrdup(text), .mtime_s = 1700000000, .bm25 = -1},
                          .src = src, .quotable = q};
}

static void test_evidence_conflict_and_restricted_mode(void **state)
{
    (void)state;
    knowledge_src a = {.id = "docs", .trust_tier = "high"}, b = {.id = "wiki", .trust_tier = "low"},
                  c = {.id = "vault", .trust_tier = "medium"};
    evidence_hit hits[3] = {mk_hit(&a, "/p/docs/a.md", "Rate limit: 100 per minute", true),
                            mk_hit(&b, "/p/wiki/b.md", "- **Rate limit**: 50 per minute.", true),
                            mk_hit(&c, "/p/vault/c.md", "Rate limit is secretword-purple forever",
                                   false)};
    evidence_input in = {.question_id = "q_01", .question = "what is the rate limit?",
                         .cwd = "/p", .hits = hits, .n_hits = 3,
                         .now_ms = 1700000000000LL};
    evidence_rerank(&in);
    json_t *cites = json_array();
    json_t *pack = evidence_build(&in, cites);
    char *dump = json_dumps(pack, 0), *cdump = json_dumps(cites, 0);
    char *text = evidence_render(pack, cites, hits, 3);
    /* One conflict per differing pair from different files, naming both. */
    json_t *conf = json_object_get(pack, "conflicts");
    assert_true(json_array_size(conf) >= 1);
    bool docs_vs_wiki = false;
    size_t i;
    json_t *v;
    json_array_foreach(conf, i, v) {
        json_t *cl = json_object_get(v, "claims");
        const char *s0 = json_string_value(json_object_get(json_array_get(cl, 0), "source"));
        const char *s1 = json_string_value(json_object_get(json_array_get(cl, 1), "source"));
        if ((!strcmp(s0, "docs") && !strcmp(s1, "wiki")) || (!strcmp(s0, "wiki") && !strcmp(s1, "docs")))
            docs_vs_wiki = true;
        assert_string_equal(json_string_value(json_object_get(v, "key")), "rate limit");
    }
    assert_true(docs_vs_wiki);
    /* The summary-only source: nowhere verbatim, but counted and cited. */
    assert_null(strstr(dump, "secretword"));
    assert_null(strstr(cdump, "secretword"));
    assert_null(strstr(text, "secretword"));
    assert_non_null(strstr(cdump, "matching passage in vault/c.md lines 1-1"));
    assert_non_null(strstr(text, "(restricted source: differs)"));
    assert_non_null(strstr(cdump, "docs/a.md#L1-L1"));
    free(dump), free(cdump), free(text);
    json_decref(pack), json_decref(cites);
    for (int k = 0; k < 3; k++)
        free(hits[k].hit.path), free(hits[k].hit.text);
}

static void test_stale_evidence_is_down_weighted(void **state)
{
    (void)state;
    knowledge_src fresh = {.id = "a", .trust_tier = "medium"},
                  old = {.id = "b", .trust_tier = "medium", .max_age_s = 86400};
    evidence_hit hits[2] = {mk_hit(&old, "/p/b.md", "deploy window: friday", true),
                            mk_hit(&fresh, "/p/a.md", "deploy window: monday", true)};
    hits[0].hit.mtime_s = 1700000000 - 5 * 86400; /* five days past its one-day max_age */
    evidence_input in = {.question_id = "q", .question = "deploy window", .hits = hits,
                         .n_hits = 2, .now_ms = 1700000000000LL};
    evidence_rerank(&in);
    assert_ptr_equal(in.hits[0].src, &fresh);
    assert_true(in.hits[1].stale);
    assert_true(in.hits[1].hit.score < in.hits[0].hit.score);
    for (int k = 0; k < 2; k++)
        free(hits[k].hit.path), free(hits[k].hit.text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry_reads_sources_with_defaults),
        cmocka_unit_test(test_registry_refuses_bad_shapes_naming_the_key),
        cmocka_unit_test(test_max_age_units),
        cmocka_unit_test(test_index_chunks_lines_and_refreshes_incrementally),
        cmocka_unit_test(test_evidence_conflict_and_restricted_mode),
        cmocka_unit_test(test_stale_evidence_is_down_weighted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
