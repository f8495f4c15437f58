/* gate.c — the ΔH gate (the definition is in gate.h). */
#include "heartbeat/gate.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "heartbeat/map.h"

typedef struct subject_hist {
    int64_t ts[GATE_SUBJECT_HISTORY];   /* ring of pass times */
    unsigned n;                         /* passes stored (≤ history) */
    unsigned head;                      /* next slot */
} subject_hist;

struct hb_gate {
    double delta;
    int64_t window_ms;
    hb_map seen;           /* fingerprint → NULL */
    char **ring;           /* the same fingerprints in arrival order */
    size_t ring_head, ring_n;
    hb_map subjects;       /* subject → subject_hist* */
    unsigned passes_since_sweep;
};

hb_gate *gate_new(double delta_hb, double window_s)
{
    hb_gate *g = xcalloc(1, sizeof *g);
    g->delta = delta_hb;
    g->window_ms = (int64_t)(window_s * 1000.0);
    g->ring = xcalloc(GATE_MAX_SEEN, sizeof *g->ring);
    return g;
}

void gate_free(hb_gate *g)
{
    if (!g)
        return;
    hb_map_free(&g->seen, NULL);
    for (size_t i = 0; i < GATE_MAX_SEEN; i++)
        free(g->ring[i]);
    free(g->ring);
    hb_map_free(&g->subjects, free);
    free(g);
}

void gate_seed(hb_gate *g, const char *fingerprint)
{
    if (!fingerprint || hb_map_has(&g->seen, fingerprint))
        return;
    if (g->ring_n == GATE_MAX_SEEN) {
        char *oldest = g->ring[g->ring_head];
        hb_map_del(&g->seen, oldest);
        free(oldest);
        g->ring_n--;
    }
    g->ring[g->ring_head] = xstrdup(fingerprint);
    g->ring_head = (g->ring_head + 1) % GATE_MAX_SEEN;
    g->ring_n++;
    hb_map_put(&g->seen, fingerprint, NULL);
    /* The ring and the map hold the same fingerprints. */
    assert(g->ring_n <= GATE_MAX_SEEN && g->seen.count == g->ring_n);
}

static unsigned recent_passes(const hb_gate *g, const subject_hist *h, int64_t now_ms)
{
    unsigned k = 0;
    for (unsigned i = 0; i < h->n; i++)
        if (now_ms - h->ts[i] <= g->window_ms)
            k++;
    return k;
}

typedef struct sweep_ctx {
    const hb_gate *g;
    int64_t now_ms;
    const char **stale;
    size_t n;
} sweep_ctx;

static void find_stale(void *ctx, const char *key, void *value)
{
    sweep_ctx *sc = ctx;
    if (!recent_passes(sc->g, value, sc->now_ms)) {
        assert(sc->n < sc->g->subjects.count + 1); /* sized by the map's count */
        sc->stale[sc->n++] = key;
    }
}

/* Subjects with no pass inside the window carry no information: drop them
 * so the map stays the size of what is recent. */
static void sweep(hb_gate *g, int64_t now_ms)
{
    sweep_ctx sc = {g, now_ms, xmalloc((g->subjects.count + 1) * sizeof(char *)), 0};
    hb_map_each(&g->subjects, find_stale, &sc);
    for (size_t i = 0; i < sc.n; i++) {
        char *k = xstrdup(sc.stale[i]);
        free(hb_map_del(&g->subjects, k));
        free(k);
    }
    free(sc.stale);
}

static double clamp01(double v)
{
    return isnan(v) || v < 0 ? 0 : v > 1 ? 1 : v;
}

gate_verdict gate_judge(hb_gate *g, const hb_candidate *c, int64_t now_ms)
{
    gate_verdict v = {false, 0, 0};
    if (hb_map_has(&g->seen, c->fingerprint))
        return v;
    subject_hist *h = c->subject ? hb_map_get(&g->subjects, c->subject) : NULL;
    unsigned k = h ? recent_passes(g, h, now_ms) : 0;
    v.novelty = ldexp(1.0, -(int)k);
    v.delta_h = clamp01(v.novelty * clamp01(c->weight) * clamp01(c->magnitude));
    v.pass = v.delta_h > g->delta || c->urgency == EVENT_CRITICAL;
    assert(v.novelty > 0 && v.novelty <= 1 && v.delta_h >= 0 && v.delta_h <= 1);
    if (!v.pass)
        return v;
    gate_seed(g, c->fingerprint);
    if (c->subject) {
        if (!h) {
            h = xcalloc(1, sizeof *h);
            hb_map_put(&g->subjects, c->subject, h);
        }
        h->ts[h->head] = now_ms;
        h->head = (h->head + 1) % GATE_SUBJECT_HISTORY;
        if (h->n < GATE_SUBJECT_HISTORY)
            h->n++;
        assert(h->head < GATE_SUBJECT_HISTORY && h->n <= GATE_SUBJECT_HISTORY);
    }
    if (++g->passes_since_sweep >= 256) {
        g->passes_since_sweep = 0;
        sweep(g, now_ms);
    }
    return v;
}
