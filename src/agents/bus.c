/* bus.c — the M_f event bus (bus.h): publishing what a sub-agent found as
 * one event file the heartbeat's mf_events source reads, behind the ΔH
 * gate, with big payloads compressed to a summary and spilled; and the
 * Publish tool that does it for the model.
 *
 * Owns the bus value (its directory name and thresholds), immutable after
 * mf_bus_new. Threading: any thread; two publishers never share a file
 * (each event has a fresh UUIDv7 name) and every file appears whole
 * (file_write_atomic's temp name starts with '.', which the reader skips).
 */
#include "agents/bus.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "governance/governance.h"
#include "tools/tool.h"

/* Refers to tree.c's definition when it is linked in, NULL otherwise, so
 * the bus and the tree can land in either order. */
#pragma weak spawn_node_bus

#define MF_BUS_INLINE_CAP (32 << 10)
#define MF_BUS_TOPIC_MAX 128
/* Per key of a compressed payload: the first bytes of its value. */
#define MF_BUS_PREVIEW 80
#define MF_BUS_MAX_KEYS 200

struct mf_bus {
    char *dir;
    double delta_min;
    size_t inline_max;
};

mf_bus *mf_bus_new(const char *dir, double delta_min, size_t inline_max)
{
    if (!dir || dir[0] != '/')
        return NULL;
    mf_bus *b = xcalloc(1, sizeof *b);
    b->dir = path_fold(dir);
    b->delta_min = delta_min < 0 || isnan(delta_min) ? MF_BUS_DELTA_MIN : delta_min;
    b->inline_max = inline_max ? inline_max : MF_BUS_INLINE_MAX;
    if (b->inline_max > MF_BUS_INLINE_CAP)
        b->inline_max = MF_BUS_INLINE_CAP;
    return b;
}

void mf_bus_free(mf_bus *b)
{
    if (!b)
        return;
    free(b->dir);
    free(b);
}

const char *mf_bus_dir(const mf_bus *b)
{
    return b ? b->dir : NULL;
}

/* [A-Za-z0-9_.-] segments joined by '/', none empty or starting with '.'
 * (the reader skips dot names, and ".." would leave the bus). */
static bool topic_ok(const char *t)
{
    size_t n = t ? strlen(t) : 0;
    if (!n || n > MF_BUS_TOPIC_MAX)
        return false;
    bool seg_start = true;
    for (const char *p = t; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '/') {
            if (seg_start)
                return false;
            seg_start = true;
            continue;
        }
        if (!isalnum(c) && c != '_' && c != '.' && c != '-')
            return false;
        if (seg_start && c == '.')
            return false;
        seg_start = false;
    }
    return !seg_start;
}

/* The first n bytes of s or fewer, never half a UTF-8 character. */
static size_t utf8_cut(const char *s, size_t len, size_t n)
{
    if (len <= n)
        return len;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* One line: control characters become spaces, then the cut. */
static char *one_line(const char *s)
{
    size_t len = utf8_cut(s, strlen(s), MF_BUS_SUMMARY_MAX);
    char *o = xstrndup(s, len);
    for (char *p = o; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    return o;
}

static json_t *preview_of(const json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        size_t len = json_string_length(v);
        return json_stringn(s, utf8_cut(s, len, MF_BUS_PREVIEW));
    }
    if (json_is_object(v) || json_is_array(v)) {
        char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        json_t *p = json_stringn(d, utf8_cut(d, strlen(d), MF_BUS_PREVIEW));
        free(d);
        return p;
    }
    return json_deep_copy(v);
}

static size_t dumped_size(const json_t *v)
{
    return json_dumpb(v, NULL, 0, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* Adds name → (size, preview) while the summary stays within limit;
 * false once it would not. */
static bool add_key(json_t *sum, const char *name, const json_t *v, size_t limit)
{
    json_t *keys = json_object_get(sum, "keys"), *sizes = json_object_get(sum, "sizes");
    json_t *prev = json_object_get(sum, "preview");
    json_array_append_new(keys, json_string(name));
    json_object_set_new(sizes, name, json_integer((json_int_t)dumped_size(v)));
    json_object_set_new(prev, name, preview_of(v));
    if (dumped_size(sum) <= limit)
        return true;
    json_array_remove(keys, json_array_size(keys) - 1);
    json_object_del(sizes, name);
    json_object_del(prev, name);
    return false;
}

/* The compressed form of a payload over the inline limit (T2.2): what it
 * holds and where the whole of it is. */
static json_t *compress(const json_t *payload, size_t bytes, const char *blob, size_t limit)
{
    const char *type = json_is_object(payload)  ? "object"
                       : json_is_array(payload) ? "array"
                       : json_is_string(payload) ? "string"
                                                 : "other";
    json_t *sum = json_pack("{s:b, s:s, s:I, s:s, s:[], s:{}, s:{}}", "compressed", 1, "type",
                            type, "bytes", (json_int_t)bytes, "blob", blob, "keys", "sizes",
                            "preview");
    bool all = true;
    if (json_is_object(payload)) {
        const char *k;
        json_t *v;
        size_t n = 0;
        json_object_foreach((json_t *)payload, k, v)
        {
            if (n++ >= MF_BUS_MAX_KEYS || !(all = add_key(sum, k, v, limit)))
                break;
        }
        all = all && n <= MF_BUS_MAX_KEYS;
    } else if (json_is_array(payload)) {
        json_object_set_new(sum, "items", json_integer((json_int_t)json_array_size(payload)));
        char idx[24];
        for (size_t i = 0; i < json_array_size(payload) && i < 3 && all; i++) {
            snprintf(idx, sizeof idx, "%zu", i);
            all = add_key(sum, idx, json_array_get(payload, i), limit);
        }
    } else {
        json_object_set_new(json_object_get(sum, "preview"), "value", preview_of(payload));
    }
    if (!all)
        json_object_set_new(sum, "keys_truncated", json_true());
    return sum;
}

static int check_event(const mf_bus_event *ev, loom_error *err)
{
    if (!topic_ok(ev->topic))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "bus: topic \"%s\" is not segments of [A-Za-z0-9_.-] joined by '/' "
                              "(none empty, none starting with '.', at most %d bytes)",
                              ev->topic ? ev->topic : "", MF_BUS_TOPIC_MAX);
    if (!ev->summary || !*ev->summary)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "bus: an event needs a summary");
    if (isnan(ev->delta_h) || ev->delta_h < 0 || ev->delta_h > 1)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "bus: delta_h %g is not in [0, 1]", ev->delta_h);
    if (ev->urgency && strcmp(ev->urgency, "low") && strcmp(ev->urgency, "high") &&
        strcmp(ev->urgency, "critical"))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "bus: urgency \"%s\" is not low, high or critical", ev->urgency);
    return 0;
}

/* The payload as the event carries it: itself, or its compressed summary
 * after the whole was spilled to the blob. NULL with err when the spill
 * failed. */
static json_t *inline_payload(const mf_bus *b, const json_t *payload, const char *id,
                              loom_error *err)
{
    size_t bytes = dumped_size(payload);
    if (bytes <= b->inline_max)
        return json_deep_copy(payload);
    if (bytes > MF_BUS_PAYLOAD_MAX) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "payload of %zu bytes is over the bus's %zu: write it to a file and "
                       "publish the path",
                       bytes, MF_BUS_PAYLOAD_MAX);
        return NULL;
    }
    char *blobs = path_join(b->dir, ".blobs");
    loom_str name = LOOM_STR_INIT;
    str_printf(&name, "%s.json", id);
    char *blob = path_join(blobs, name.ptr);
    str_free(&name);
    char *text = json_dumps(payload, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *sum = NULL;
    if (file_mkdirs(blobs, 0755, err) == 0 &&
        file_write_atomic(blob, text, strlen(text), 0644, err) == 0)
        sum = compress(payload, bytes, blob, b->inline_max);
    free(text);
    free(blobs);
    free(blob);
    return sum;
}

int mf_bus_publish(mf_bus *b, const mf_bus_event *ev, char **id_out, loom_error *err)
{
    if (id_out)
        *id_out = NULL;
    if (!b)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "bus: none");
    int rc = check_event(ev, err);
    if (rc < 0)
        return rc;
    if (!(ev->delta_h > b->delta_min))
        return 0; /* T2.1: only what adds information is broadcast */
    char uuid[UUID_STR_LEN];
    uuid_v7(uuid);
    loom_str id = LOOM_STR_INIT;
    str_printf(&id, "mf_%s", uuid);
    char ts[32];
    clock_iso8601(clock_wall_ms(), ts);
    char *summary = one_line(ev->summary);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:f, s:s, s:s}", "id", id.ptr, "topic",
                            ev->topic, "sender", ev->source ? ev->source : "main", "summary",
                            summary, "delta_h", ev->delta_h, "urgency",
                            ev->urgency ? ev->urgency : "low", "ts", ts);
    free(summary);
    if (ev->payload) {
        json_t *p = inline_payload(b, ev->payload, id.ptr, err);
        if (!p) {
            rc = -LOOM_ERR_IO;
            goto out;
        }
        json_object_set_new(doc, "payload", p);
    }
    size_t seg = strcspn(ev->topic, "/");
    char *folder_name = xstrndup(ev->topic, seg);
    char *folder = path_join(b->dir, folder_name);
    loom_str file = LOOM_STR_INIT;
    str_printf(&file, "%s/%s.json", folder, id.ptr);
    char *text = json_dumps(doc, JSON_COMPACT);
    if ((rc = file_mkdirs(folder, 0755, err)) == 0 &&
        (rc = file_write_atomic(file.ptr, text, strlen(text), 0644, err)) == 0) {
        rc = 1;
        if (id_out)
            *id_out = str_steal(&id);
    }
    free(text);
    str_free(&file);
    free(folder);
    free(folder_name);
out:
    json_decref(doc);
    str_free(&id);
    return rc;
}

/* ---- the Publish tool ------------------------------------------------------ */

static int publish_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    mf_bus *b = ctx->spawn && spawn_node_bus ? spawn_node_bus(ctx->spawn) : NULL;
    if (!b)
        return tool_error(out, "Publish is not available here: this run has no event bus.");
    json_t *dh = json_object_get(input, "delta_h");
    mf_bus_event ev = {
        .topic = json_string_value(json_object_get(input, "topic")),
        .source = ctx->gov && ctx->gov->agent_id ? ctx->gov->agent_id : "main",
        .summary = json_string_value(json_object_get(input, "summary")),
        .delta_h = json_is_number(dh) ? json_number_value(dh) : NAN,
        .urgency = json_string_value(json_object_get(input, "urgency")),
        .payload = json_object_get(input, "payload"),
    };
    loom_error err;
    loom_error_clear(&err);
    char *id = NULL;
    int rc = mf_bus_publish(b, &ev, &id, &err);
    if (rc < 0)
        return tool_error(out, "Not published: %s", err.message + (strncmp(err.message, "bus: ", 5)
                                                                       ? 0 : 5));
    if (rc == 0) {
        str_printf(&out->text,
                   "Not published: delta_h %.2f is not above the bus's threshold %.2f. Publish "
                   "what changes what the others know; put the rest in your final report.",
                   ev.delta_h, b->delta_min);
        out->raw = json_pack("{s:b}", "published", 0);
        return 0;
    }
    str_printf(&out->text, "Published %s on %s.", id, ev.topic);
    out->raw = json_pack("{s:b, s:s, s:s}", "published", 1, "id", id, "topic", ev.topic);
    free(id);
    return 0;
}

const tool_def tool_publish = {
    .name = "Publish",
    .description =
        "Publishes one finding to the shared event bus, where the main agent and the other "
        "agents see it as an event while they work. Publish only what changes what they know "
        "(a root cause found, an interface changed, a blocker, a result others wait for), not "
        "progress notes: delta_h is your estimate, from 0 to 1, of how much the event tells "
        "them that they do not know yet, and events at or below the bus's threshold are not "
        "sent. A large payload is kept whole in a file and the event carries its summary.",
    .input_schema =
        "{\"type\":\"object\",\"properties\":{"
        "\"topic\":{\"type\":\"string\",\"description\":\"Where it goes, e.g. findings or "
        "agents/<your id>: letters, digits, _ . - in segments joined by /\"},"
        "\"summary\":{\"type\":\"string\",\"description\":\"One line the others will read\"},"
        "\"delta_h\":{\"type\":\"number\",\"minimum\":0,\"maximum\":1,\"description\":\"The "
        "information it adds for the others, 0 to 1\"},"
        "\"urgency\":{\"type\":\"string\",\"enum\":[\"low\",\"high\",\"critical\"]},"
        "\"payload\":{\"description\":\"Optional structured details (any JSON)\"}},"
        "\"required\":[\"topic\",\"summary\",\"delta_h\"],\"additionalProperties\":false}",
    .read_only = false,
    .local_state_only = true, /* it writes only Loom's own bus folder */
    .concurrency_safe = true,
    .run = publish_run,
};
