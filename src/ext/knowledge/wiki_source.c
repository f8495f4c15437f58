/* wiki_source.c — the internal_wiki source's one request and its answer
 * (wiki_source.h). Owns nothing past a call. Any thread. */
#include "ext/knowledge/wiki_source.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "net/http.h"

#define WIKI_BODY_MAX (1024 * 1024)
#define WIKI_TEXT_MAX 4096
#define WIKI_TIMEOUT_MS 15000

typedef struct sink {
    loom_str body;
    loom_error *err;
} sink;

static int on_body(void *ctx, const char *data, size_t len)
{
    sink *s = ctx;
    if (s->body.len + len > WIKI_BODY_MAX) {
        loom_error_set(s->err, LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE,
                       "the answer is larger than %d KiB", WIKI_BODY_MAX / 1024);
        return 1;
    }
    str_append(&s->body, data, len);
    return 0;
}

int wiki_parse_results(const knowledge_src *src, const char *body, size_t len, size_t limit,
                       fs_hit **out, size_t *n, loom_error *err)
{
    *out = NULL;
    *n = 0;
    json_error_t je;
    json_t *doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
    json_t *results = json_object_get(doc, "results");
    if (!json_is_array(results)) {
        json_decref(doc);
        return loom_error_set(err, LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE,
                              "%s: the answer is not {\"results\": [...]}%s%s", src->id,
                              doc ? "" : ": ", doc ? "" : je.text);
    }
    size_t count = json_array_size(results) < limit ? json_array_size(results) : limit;
    *out = count ? calloc(count, sizeof **out) : NULL;
    for (size_t i = 0; i < count; i++) {
        json_t *r = json_array_get(results, i);
        const char *uri = json_string_value(json_object_get(r, "uri"));
        const char *text = json_string_value(json_object_get(r, "text"));
        json_t *up = json_object_get(r, "updated");
        if (!uri || !*uri || !text || (up && !json_is_integer(up))) {
            fs_hits_free(*out, *n);
            *out = NULL, *n = 0;
            json_decref(doc);
            return loom_error_set(err, LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE,
                                  "%s: results[%zu] needs uri and text (text), updated an integer",
                                  src->id, i);
        }
        size_t tl = strlen(text) > WIKI_TEXT_MAX ? WIKI_TEXT_MAX : strlen(text);
        while (tl && tl < strlen(text) && ((unsigned char)text[tl] & 0xC0) == 0x80)
            tl--; /* never half a UTF-8 character */
        fs_hit *h = &(*out)[(*n)++];
        h->path = xstrdup(uri);
        h->text = xstrndup(text, tl);
        h->mtime_s = up ? (int64_t)json_integer_value(up) : 0;
        h->bm25 = -(double)(count - i); /* the endpoint's order: first is best */
    }
    json_decref(doc);
    return 0;
}

int wiki_search(const knowledge_src *src, const char *question, size_t limit,
                const loom_cancel *cancel, fs_hit **out, size_t *n, loom_error *err)
{
    *out = NULL;
    *n = 0;
    if (!src->endpoint)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: no endpoint", src->id);
    json_t *q = json_pack("{s:s, s:I}", "query", question ? question : "", "limit",
                          (json_int_t)limit);
    char *req_body = json_dumps(q, JSON_COMPACT);
    json_decref(q);
    static const char *const headers[] = {"Content-Type: application/json",
                                          "Accept: application/json", NULL};
    http_request req = {.method = "POST", .url = src->endpoint, .headers = headers,
                        .body = req_body, .body_len = strlen(req_body),
                        .connect_timeout_ms = 5000, .idle_timeout_ms = WIKI_TIMEOUT_MS,
                        .total_timeout_ms = WIKI_TIMEOUT_MS, .cancel = cancel};
    http_response resp = {0};
    sink s = {LOOM_STR_INIT, err};
    loom_error herr = {0};
    s.err = &herr;
    int rc = http_perform(&req, on_body, &s, &resp, &herr);
    free(req_body);
    if (rc != 0) {
        loom_error_set(err, LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE, "%s: %s: %s", src->id,
                       src->endpoint, herr.message);
    } else if (resp.status != 200) {
        rc = loom_error_set(err, LOOM_ERR_KNOWLEDGE_INSUFFICIENT_EVIDENCE,
                            "%s: %s answered HTTP %ld", src->id, src->endpoint, resp.status);
    } else {
        rc = wiki_parse_results(src, s.body.ptr ? s.body.ptr : "", s.body.len, limit, out, n, err);
    }
    http_response_free(&resp);
    str_free(&s.body);
    return rc ? -1 : 0;
}
