/* fuzz_context_view.c — the context the model sees, built from a session
 * file (outside input: a crash may tear it, a person may edit it, a fork
 * copies it). Any bytes are parsed as JSONL (transcript_parse); the
 * context-edit records are gathered (ladder_edits_load) and applied over
 * the active chain (ladder_view), and the view becomes a request
 * (history_from_records). Then the local ladder steps run over the view
 * with a small window — snip, micro, collapse, each edit applied before
 * the next step, as the loop does — and the final view goes through
 * history_from_records again, compact_build_request and renew_compress
 * with small budgets. Must never crash, leak or hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "context/compact.h"
#include "context/ladder.h"
#include "context/renew.h"
#include "session/history.h"
#include "session/transcript.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct view {
    json_t **recs;
    size_t n;
    json_t *keep;
} view;

static void view_build(view *v, const ladder_edits *e, json_t **chain, size_t n)
{
    ladder_view(e, chain, n, &v->recs, &v->n, &v->keep);
}

static void view_free(view *v)
{
    free(v->recs);
    json_decref(v->keep);
    memset(v, 0, sizeof *v);
}

static void to_request(const view *v)
{
    msg_request req;
    memset(&req, 0, sizeof req);
    history_stats st;
    history_from_records(v->recs, v->n, &req, &st);
    msg_request_free(&req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    transcript *t = transcript_parse((const char *)data, size, "fuzz");
    ladder_edits e;
    ladder_edits_init(&e);
    ladder_edits_load(&e, t);

    json_t **chain = NULL;
    size_t n = 0;
    transcript_active(t, &chain, &n);
    view v;
    view_build(&v, &e, chain, n);
    to_request(&v);

    /* An eager ladder over a small window, so the steps find work in short
     * inputs too; the size picks the window, so it varies with the input. */
    ladder_config c;
    ladder_config_default(&c);
    c.keep_results = 1;
    c.keep_turns = 1;
    int64_t window = 200 + (int64_t)(size % 7) * 150;
    for (int step = 0; step < 3; step++) {
        int64_t saved = 0;
        json_t *rec = step == 0   ? ladder_snip(&c, v.recs, v.n, window, &saved)
                      : step == 1 ? ladder_micro(&c, v.recs, v.n, &saved)
                                  : ladder_collapse(&c, v.recs, v.n, &saved);
        if (!rec)
            continue;
        ladder_edits_add(&e, rec);
        json_decref(rec);
        view_free(&v);
        view_build(&v, &e, chain, n);
    }
    to_request(&v);
    for (size_t i = 0; i < v.n; i++)
        (void)ladder_record_tokens(v.recs[i]);

    /* D: the summarization request, fitted into a small budget. */
    json_t *um = compact_user_messages(chain, n);
    msg_request req;
    memset(&req, 0, sizeof req);
    compact_build_request(v.recs, v.n, um, size % 2 ? "focus on the tests" : NULL,
                          100 + (int64_t)(size % 5) * 100, &req);
    msg_request_free(&req);
    (void)compact_has_new_history(chain, n);

    /* renew: the goal is the first thing the user wrote, as in a session. */
    const char *goal = json_string_value(json_array_get(um, 0));
    renew_stats rst;
    free(renew_compress(v.recs, v.n, goal ? goal : "fix the build", 50 + (int64_t)(size % 3) * 100,
                        0.1, 7, &rst));
    json_decref(um);

    /* The same bytes as a model's reply to the summarization request. */
    char *reply = malloc(size + 1);
    memcpy(reply, data, size);
    reply[size] = '\0';
    free(compact_extract_summary(reply));
    free(reply);

    view_free(&v);
    free(chain);
    ladder_edits_free(&e);
    transcript_free(t);
    return 0;
}
