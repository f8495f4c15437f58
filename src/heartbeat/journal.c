/* journal.c — the runtime journal (journal.h). */
#include "heartbeat/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/jsonl.h"
#include "base/str.h"

struct journal {
    int fd;
    char *path;
};

journal *journal_open(const char *path, loom_error *err)
{
    if (!path || !*path) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "journal: no path");
        return NULL;
    }
    int fd = jsonl_open(path, "journal", err);
    if (fd < 0)
        return NULL;
    journal *j = xcalloc(1, sizeof *j);
    j->fd = fd;
    j->path = xstrdup(path);
    return j;
}

const char *journal_path(const journal *j)
{
    return j ? j->path : NULL;
}

void journal_close(journal *j)
{
    if (!j)
        return;
    close(j->fd);
    free(j->path);
    free(j);
}

int journal_append_ex(journal *j, const surface_event *ev, event_state state,
                      const json_t *extra, loom_error *err)
{
    if (!j || !ev || !ev->id)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "journal: no journal or event");
    char ts[32];
    clock_iso8601(clock_wall_ms(), ts);
    json_t *o = json_object();
    json_object_set_new(o, "ts", json_string(ts));
    json_set_str(o, "event_id", ev->id);
    json_set_str(o, "fingerprint", ev->fingerprint);
    json_object_set_new(o, "state", json_string(event_state_name(state)));
    json_set_str(o, "source", ev->source);
    json_object_set_new(o, "urgency", json_string(event_urgency_name(ev->urgency)));
    json_set_str(o, "summary", ev->summary);
    json_set_str(o, "disposition", ev->disposition);
    json_set_str(o, "note", ev->note);
    if (extra) {
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)extra, k, v)
            json_object_set(o, k, v);
    }
    int rc = jsonl_append(j->fd, o, err);
    json_decref(o);
    if (rc == -LOOM_ERR_INTERNAL)
        return loom_error_set(err, LOOM_ERR_INTERNAL, "journal: event %s is not serialisable",
                              ev->id);
    if (rc < 0)
        loom_error_prefix(err, "journal %s", j->path);
    return rc;
}

int journal_append(journal *j, const surface_event *ev, event_state state, loom_error *err)
{
    return journal_append_ex(j, ev, state, NULL, err);
}

int journal_read(const char *path, int (*fn)(void *ctx, const json_t *line), void *ctx,
                 size_t *skipped, loom_error *err)
{
    if (skipped)
        *skipped = 0;
    char *data;
    size_t len;
    loom_error e;
    loom_error_clear(&e);
    if (file_read_all(path, &data, &len, &e) < 0) {
        if (!file_exists(path))
            return 0;
        if (err)
            *err = e;
        return -(int)e.code;
    }
    size_t start = 0;
    int stop = 0;
    while (start < len && !stop) {
        char *nl = memchr(data + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - data) : len;
        if (end > start) {
            json_t *line = json_parse_fast(data + start, end - start, 0, NULL);
            if (json_is_object(line))
                stop = fn(ctx, line);
            else if (skipped)
                (*skipped)++;
            json_decref(line);
        }
        start = end + 1;
    }
    free(data);
    return 0;
}
