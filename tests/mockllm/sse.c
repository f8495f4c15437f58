/* sse.c — the list of pre-rendered Server-Sent Events a streaming reply is
 * made of. Rendering everything up front keeps the formats free of timing
 * and fault logic, which stream.c applies uniformly to any list. */
#include "mockllm.h"

#include <stdlib.h>
#include <string.h>

static void events_push(mock_events *e, char *s, size_t n)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 32;
        e->ev = xrealloc(e->ev, e->cap * sizeof *e->ev);
        e->len = xrealloc(e->len, e->cap * sizeof *e->len);
    }
    e->ev[e->n] = s;
    e->len[e->n] = n;
    e->n++;
}

void events_add_json(mock_events *e, const char *name, json_t *data)
{
    /* Compact JSON on one line, as every provider sends it. */
    char *js = json_dumps(data, JSON_COMPACT);
    json_decref(data);
    if (!js)
        js = xstrdup("{}");
    char *s = name ? xprintf("event: %s\ndata: %s\n\n", name, js)
                   : xprintf("data: %s\n\n", js);
    free(js);
    events_push(e, s, strlen(s));
}

void events_add_raw(mock_events *e, const char *s, size_t n)
{
    char *c = xmalloc(n + 1);
    memcpy(c, s, n);
    c[n] = '\0';
    events_push(e, c, n);
}

void events_free(mock_events *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->ev[i]);
    free(e->ev);
    free(e->len);
    memset(e, 0, sizeof *e);
}
