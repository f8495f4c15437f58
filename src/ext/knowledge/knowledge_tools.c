/* knowledge_tools.c — KnowledgeQuestion and SearchKnowledge (knowledge.h):
 * the model names its knowledge gap, then asks for evidence on it.
 *
 * Both change only Loom's own state (C_working's knowledge surface) and
 * read only what the user's registry lists, so they never ask
 * (local_state_only); a settings deny still denies them. Not
 * concurrency-safe: each edits the surface (read, change, write back) on
 * the run's thread. */
#include "ext/knowledge/knowledge_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "ext/knowledge/evidence.h"
#include "ext/knowledge/fs_index.h"
#include "ext/knowledge/wiki_source.h"

/* Passages asked of the index per source, before the reranker. */
#define QUERY_LIMIT 24
#define QUESTION_MAX 2000

static const char question_description[] =
    "Records a knowledge gap: a question the task needs answered from the external knowledge "
    "sources (project docs, wikis) rather than from the code in front of you or your memory. "
    "Returns the question's id (q_01, …), which SearchKnowledge needs. Record a question only "
    "when the task really depends on facts you do not have.";

static const char search_description[] =
    "Searches the configured knowledge sources for an active question recorded with "
    "KnowledgeQuestion and returns an evidence pack: a summary, key facts, conflicts between "
    "sources, and citations (file and lines). When your answer relies on the pack, cite the "
    "citation ids in square brackets, e.g. [cit_1a2b3c4d]. A source marked summary-only must "
    "not be quoted. Optional sources: the ids of the sources to search (default: all).";

static const char question_schema[] =
    "{\"type\":\"object\",\"properties\":{\"question\":{\"type\":\"string\",\"description\":"
    "\"The question, as one sentence.\"}},\"required\":[\"question\"],"
    "\"additionalProperties\":false}";

static const char search_schema[] =
    "{\"type\":\"object\",\"properties\":{\"question_id\":{\"type\":\"string\",\"description\":"
    "\"The id KnowledgeQuestion returned.\"},\"sources\":{\"type\":\"array\",\"items\":"
    "{\"type\":\"string\"},\"description\":\"Source ids to search (default: all).\"}},"
    "\"required\":[\"question_id\"],\"additionalProperties\":false}";

static int coded(tool_result *out, loom_error_code code, const char *fmt, const char *a,
                 const char *b)
{
    tool_error(out, "%s: ", loom_error_code_name(code));
    str_printf(&out->text, fmt, a, b);
    out->raw = json_pack("{s:s}", "error_code", loom_error_code_name(code));
    return 0;
}

static json_t *find_question(json_t *qs, const char *id)
{
    size_t i;
    json_t *q;
    json_array_foreach(qs, i, q) {
        const char *x = json_string_value(json_object_get(q, "question_id"));
        if (x && id && !strcmp(x, id))
            return q;
    }
    return NULL;
}

static int question_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const char *text = json_get_str(input, "question", NULL);
    if (!ctx->working)
        return tool_error(out, "KnowledgeQuestion: this run has no working memory");
    if (!text || !*text || strlen(text) > QUESTION_MAX)
        return tool_error(out, "question: give the question as text (at most %d bytes)",
                          QUESTION_MAX);
    json_t *q, *e, *c;
    working_get_knowledge(ctx->working, &q, &e, &c);
    /* The same question twice is one gap: its id again. */
    size_t i;
    json_t *v;
    json_array_foreach(q, i, v) {
        if (!strcmp(json_string_value(json_object_get(v, "question")) ?: "", text)) {
            str_printf(&out->text, "The question is already active as %s.",
                       json_string_value(json_object_get(v, "question_id")));
            json_decref(q), json_decref(e), json_decref(c);
            return 0;
        }
    }
    char id[32], now[32];
    snprintf(id, sizeof id, "q_%02zu", json_array_size(q) + 1);
    clock_iso8601(clock_wall_ms(), now);
    json_array_append_new(q, json_pack("{s:s, s:s, s:s, s:s}", "question_id", id, "question", text,
                                       "status", "open", "asked_at", now));
    working_set_knowledge(ctx->working, q, e, c);
    str_printf(&out->text,
               "Recorded active question %s. Search for evidence with SearchKnowledge "
               "{\"question_id\": \"%s\"}.",
               id, id);
    out->raw = json_pack("{s:s}", "question_id", id);
    return 0;
}

/* Whether the caller may see s: a tenant's source only by that tenant. */
static bool visible(const knowledge_session *ks, const knowledge_src *s)
{
    if (!s->tenant_id)
        return true;
    return ks->tenant_id && !strcmp(ks->tenant_id, s->tenant_id);
}

typedef struct search_plan {
    const knowledge_src *src[64];
    size_t n;
    char *skipped[64];
    size_t n_skipped;
} search_plan;

static int plan_sources(knowledge_session *ks, const json_t *names, search_plan *p,
                        tool_result *out)
{
    if (json_is_array(names) && json_array_size(names)) {
        size_t i;
        json_t *v;
        json_array_foreach(names, i, v) {
            const char *id = json_string_value(v);
            const knowledge_src *s = knowledge_registry_find(ks->reg, id);
            if (!s)
                return coded(out, LOOM_ERR_KNOWLEDGE_SOURCE_DENIED,
                             "no knowledge source %s is configured%s", id ? id : "(not text)", "");
            if (!visible(ks, s))
                return coded(out, LOOM_ERR_KNOWLEDGE_SOURCE_SCOPE_DENIED,
                             "knowledge source %s belongs to tenant %s, not to this caller", id,
                             s->tenant_id);
            if (!s->allow_search)
                return coded(out, LOOM_ERR_KNOWLEDGE_SOURCE_DENIED,
                             "knowledge source %s does not allow search "
                             "(retrieval_policy.allow_search: false)%s", id, "");
            if (p->n < 64)
                p->src[p->n++] = s;
        }
        return 1;
    }
    for (size_t i = 0; i < ks->reg->n && p->n < 64; i++) {
        const knowledge_src *s = &ks->reg->v[i];
        if (visible(ks, s) && s->allow_search)
            p->src[p->n++] = s;
    }
    return 1;
}

/* The index's passages of every planned source, as evidence hits. */
static evidence_hit *gather(knowledge_session *ks, search_plan *p, const char *question,
                            const loom_cancel *cancel, size_t *n, loom_str *notes)
{
    evidence_hit *all = NULL;
    *n = 0;
    for (size_t i = 0; i < p->n; i++) {
        const knowledge_src *s = p->src[i];
        char why[1200];
        if (s->type == KSRC_INTERNAL_WIKI) {
            loom_error err = {0};
            fs_hit *h = NULL;
            size_t nh = 0;
            if (wiki_search(s, question, QUERY_LIMIT, cancel, &h, &nh, &err) != 0) {
                snprintf(why, sizeof why, "%s (%s)", s->id, err.message);
                p->skipped[p->n_skipped++] = xstrdup(why);
                continue;
            }
            all = xrealloc(all, (*n + nh + 1) * sizeof *all);
            for (size_t k = 0; k < nh; k++)
                all[(*n)++] = (evidence_hit){.hit = h[k], .src = s,
                                             .quotable = knowledge_src_quotable(ks->reg, s)};
            free(h);
            continue;
        }
        if (s->type != KSRC_FILESYSTEM) {
            snprintf(why, sizeof why, "%s (type %s: not searchable in this version)", s->id,
                     ksrc_type_name(s->type));
            p->skipped[p->n_skipped++] = xstrdup(why);
            continue;
        }
        loom_error err = {0};
        fs_hit *h = NULL;
        size_t nh = 0;
        if (fs_index_refresh(ks->index_path, s, NULL, &err) != 0 ||
            fs_index_query(ks->index_path, s, question, QUERY_LIMIT, &h, &nh, &err) != 0) {
            snprintf(why, sizeof why, "%s (%s)", s->id, err.message);
            p->skipped[p->n_skipped++] = xstrdup(why);
            str_printf(notes, "%s\n", err.message);
            continue;
        }
        all = xrealloc(all, (*n + nh + 1) * sizeof *all);
        for (size_t k = 0; k < nh; k++)
            all[(*n)++] = (evidence_hit){.hit = h[k], .src = s,
                                         .quotable = knowledge_src_quotable(ks->reg, s)};
        free(h); /* the hits' strings moved into all */
    }
    return all;
}

/* Keeps the pack as a file and announces it as an evidence_pack artifact. */
static void keep_pack(knowledge_session *ks, tool_ctx *ctx, const json_t *pack, const json_t *cites)
{
    const char *pid = json_string_value(json_object_get(pack, "evidence_pack_id"));
    char name[96];
    snprintf(name, sizeof name, "%s.json", pid);
    char *path = NULL;
    if (ks->pack_dir) {
        char *dir = path_join(ks->pack_dir, "evidence");
        loom_error err = {0};
        path = path_join(dir, name);
        json_t *doc = json_deep_copy(pack);
        json_object_set(doc, "citation_ids", json_object_get(doc, "citations"));
        json_object_set(doc, "citations", (json_t *)cites);
        char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (file_mkdirs(dir, 0700, &err) != 0 ||
            file_write_atomic(path, text, strlen(text), 0600, &err) != 0) {
            free(path);
            path = NULL;
        }
        free(text), free(dir);
        json_decref(doc);
    }
    if (ctx->emit) {
        loom_str uri = LOOM_STR_INIT;
        if (path)
            str_printf(&uri, "file://%s", path);
        else
            str_printf(&uri, "evidence://%s", pid);
        ctx->emit(ctx->emit_ctx, LOOM_EV_ARTIFACT_CREATED,
                  json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "artifact_id", pid, "name", name,
                            "kind", "evidence_pack", "uri", uri.ptr, "title", "Evidence pack",
                            "question_id", json_string_value(json_object_get(pack, "question_id"))));
        str_free(&uri);
    }
    free(path);
}

/* The citations as an artifact carries them (the server's Citation
 * object, docs/knowledge.md): also title, line and a snippet — the
 * passage cut short for a quotable source, "" for a summary-only one. The
 * surface keeps them without (it holds no passage text). */
static json_t *export_citations(const json_t *cites, const evidence_hit *hits, size_t n)
{
    json_t *out = json_deep_copy(cites);
    size_t i;
    json_t *c;
    json_array_foreach(out, i, c) {
        if (i >= n)
            break;
        const evidence_hit *h = &hits[i];
        const char *slash = strrchr(h->hit.path, '/');
        json_object_set_new(c, "title", json_string(slash && slash[1] ? slash + 1 : h->hit.path));
        json_object_set_new(c, "line", h->hit.line_start > 0 ? json_integer(h->hit.line_start)
                                                             : json_null());
        size_t len = strlen(h->hit.text);
        size_t cut = len > 240 ? 240 : len;
        while (cut && cut < len && ((unsigned char)h->hit.text[cut] & 0xC0) == 0x80)
            cut--;
        json_object_set_new(c, "snippet", json_is_true(json_object_get(c, "quotable"))
                                              ? json_stringn(h->hit.text, cut)
                                              : json_string(""));
    }
    return out;
}

static int search_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    knowledge_session *ks = ctx->self ? ctx->self->impl : NULL;
    if (!ks || !ctx->working)
        return tool_error(out, "SearchKnowledge: no knowledge session (internal error)");
    const char *qid = json_get_str(input, "question_id", NULL);
    json_t *qs, *packs, *cites;
    working_get_knowledge(ctx->working, &qs, &packs, &cites);
    json_t *q = find_question(qs, qid);
    search_plan p = {0};
    int rc = 0;
    if (!q) {
        /* Retrieval only on a gap (seed 000 L902): nothing is read. */
        coded(out, LOOM_ERR_INVALID_REQUEST,
              "no active question %s: record the knowledge gap with KnowledgeQuestion first, then "
              "search with the id it returns%s", qid ? qid : "(none given)", "");
        goto done;
    }
    if (plan_sources(ks, json_object_get(input, "sources"), &p, out) != 1 || out->is_error)
        goto done;
    const char *question = json_string_value(json_object_get(q, "question"));
    loom_str notes = LOOM_STR_INIT;
    size_t n = 0;
    evidence_hit *hits = gather(ks, &p, question, ctx->cancel, &n, &notes);
    str_free(&notes);
    const char *searched[65];
    size_t ns = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.src[i]->type == KSRC_FILESYSTEM || p.src[i]->type == KSRC_INTERNAL_WIKI)
            searched[ns++] = p.src[i]->id;
    searched[ns] = NULL;
    p.skipped[p.n_skipped] = NULL;
    evidence_input in = {.question_id = qid, .question = question, .cwd = ks->cwd, .hits = hits,
                         .n_hits = n, .searched = searched,
                         .not_searched = (const char *const *)p.skipped, .now_ms = clock_wall_ms()};
    evidence_rerank(&in);
    if (n == 0) {
        coded(out, LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE,
              "no passage of the searched sources matches %s; the question stays open%s", qid, "");
        goto free_hits;
    }
    json_t *new_cites = json_array();
    json_t *pack = evidence_build(&in, new_cites);
    json_array_extend(cites, new_cites);
    json_array_append(packs, pack);
    json_object_set_new(q, "status", json_string("answered"));
    json_object_set(q, "evidence_pack_id", json_object_get(pack, "evidence_pack_id"));
    working_set_knowledge(ctx->working, qs, packs, cites);
    qs = packs = cites = NULL;
    json_t *exported = export_citations(new_cites, hits, n);
    knowledge_session_note_pack(ks, pack, exported);
    keep_pack(ks, ctx, pack, exported);
    json_decref(exported);
    char *text = evidence_render(pack, new_cites, hits, n);
    str_puts(&out->text, text);
    free(text);
    out->raw = json_pack("{s:O, s:o}", "evidence_pack", pack, "citations", new_cites);
    json_decref(pack);
free_hits:
    for (size_t i = 0; i < n; i++)
        free(hits[i].hit.path), free(hits[i].hit.text);
    free(hits);
done:
    for (size_t i = 0; i < p.n_skipped; i++)
        free(p.skipped[i]);
    json_decref(qs), json_decref(packs), json_decref(cites);
    return rc;
}

void knowledge_tools_build(knowledge_session *ks)
{
    ks->question_def = (tool_def){.name = "KnowledgeQuestion",
                                  .description = question_description,
                                  .input_schema = question_schema,
                                  .run = question_run,
                                  .local_state_only = true,
                                  .impl = ks};
    ks->search_def = (tool_def){.name = "SearchKnowledge",
                                .description = search_description,
                                .input_schema = search_schema,
                                .read_only = true,
                                .run = search_run,
                                .local_state_only = true,
                                .impl = ks};
}
