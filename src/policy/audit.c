/* audit.c — writes the audit log (audit.h) and digests tool inputs.
 *
 * Each record is built whole as one buffer ending in '\n' and written with
 * a single write(2) on an O_APPEND descriptor. The mutex keeps threads of
 * this process from splitting a record across a short write; O_APPEND keeps
 * other processes' records from landing inside ours.
 *
 * The digest is SHA-256 (FIPS 180-4), implemented here: a digest in an
 * audit log should not collide by accident or by design, and 64-bit
 * FNV-1a can do both.
 */
#include "policy/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "base/utf8.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "base/jsonl.h"

/* ---- SHA-256 --------------------------------------------------------------
 * FIPS 180-4 §4.2.2 (constants) and §6.2 (the compression function). */

typedef struct sha256 {
    uint32_t h[8];
    uint64_t bytes;       /* message length so far */
    unsigned char block[64];
    size_t fill;          /* bytes waiting in block */
} sha256;

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static uint32_t rotr(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha256_init(sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->fill = 0;
}

static void sha256_block(sha256 *s, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    uint32_t e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      K256[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

static void sha256_update(sha256 *s, const unsigned char *p, size_t n)
{
    s->bytes += n;
    while (n) {
        size_t take = 64 - s->fill < n ? 64 - s->fill : n;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        n -= take;
        if (s->fill == 64) {
            sha256_block(s, s->block);
            s->fill = 0;
        }
    }
}

static void sha256_final(sha256 *s, unsigned char out[32])
{
    uint64_t bits = s->bytes * 8;
    /* 0x80, zeros to 56 mod 64, then the length in bits, big-endian. */
    static const unsigned char pad[64] = {0x80};
    size_t padlen = s->fill < 56 ? 56 - s->fill : 120 - s->fill;
    unsigned char len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(s, pad, padlen);
    sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void audit_digest_bytes(const void *data, size_t len, char out[AUDIT_DIGEST_LEN])
{
    sha256 s;
    unsigned char d[32];
    sha256_init(&s);
    sha256_update(&s, data, len);
    sha256_final(&s, d);
    static const char hex[] = "0123456789abcdef";
    memcpy(out, "sha256:", 7);
    for (int i = 0; i < 32; i++) {
        out[7 + 2 * i] = hex[d[i] >> 4];
        out[8 + 2 * i] = hex[d[i] & 15];
    }
    out[71] = '\0';
}

int audit_digest_json(const json_t *v, char out[AUDIT_DIGEST_LEN])
{
    if (!v) {
        audit_digest_bytes("null", 4, out);
        return 0;
    }
    char *canon = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!canon)
        return -1;
    audit_digest_bytes(canon, strlen(canon), out);
    free(canon);
    return 0;
}

/* ---- the log -------------------------------------------------------------- */

struct audit_log {
    pthread_mutex_t lock;
    int fd;
    char *path;
};

audit_log *audit_open(const char *path, loom_error *err)
{
    if (!path || !*path) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "audit log: no path given");
        return NULL;
    }
    int fd = jsonl_open(path, "audit log", err);
    if (fd < 0)
        return NULL;
    audit_log *log = xcalloc(1, sizeof *log);
    log->path = xstrdup(path);
    pthread_mutex_init(&log->lock, NULL);
    log->fd = fd;
    return log;
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* Hook names, reasons and rule text come from outside and jansson refuses
 * invalid UTF-8; a record must never be lost for that, so bad bytes are
 * written as U+FFFD. */
static json_t *text(const char *s)
{
    if (!s)
        return json_null();
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t len;
    char *clean = utf8_sanitize(s, strlen(s), &len);
    j = json_stringn(clean, len);
    free(clean);
    return j ? j : json_null();
}

static json_t *build_record(const audit_entry *e)
{
    json_t *o = json_object();
    char ts[32];
    clock_iso8601(e->ts_ms ? e->ts_ms : clock_wall_ms(), ts);
    json_object_set_new(o, "v", json_integer(1));
    json_object_set_new(o, "ts", json_string(ts));
    json_object_set_new(o, "session_id", text(e->session_id));
    json_object_set_new(o, "run_id", text(e->run_id));
    json_object_set_new(o, "call_id", text(e->call_id));
    json_object_set_new(o, "tool", text(e->tool));

    char digest[AUDIT_DIGEST_LEN];
    json_object_set_new(o, "input_digest",
                        e->input && !audit_digest_json(e->input, digest) ? json_string(digest)
                                                                         : json_null());
    json_object_set_new(o, "mode", json_string(perm_mode_name(e->mode)));

    if (e->rule && e->rule->verdict != PERM_NONE) {
        char rule[sizeof e->rule->rule + 1];
        memcpy(rule, e->rule->rule, sizeof e->rule->rule);
        rule[sizeof e->rule->rule] = '\0';  /* a full buffer may lack its NUL */
        json_object_set_new(o, "rule",
                            json_pack("{s:o, s:s, s:s}", "text", text(rule), "source",
                                      rule_source_name(e->rule->source), "verdict",
                                      perm_verdict_name(e->rule->verdict)));
    } else {
        json_object_set_new(o, "rule", json_null());
    }

    json_t *hooks = json_array();
    for (size_t i = 0; e->hooks && i < e->n_hooks; i++)
        json_array_append_new(hooks, json_pack("{s:o, s:s, s:o}", "name", text(e->hooks[i].name),
                                               "verdict", perm_verdict_name(e->hooks[i].verdict),
                                               "reason", text(e->hooks[i].reason)));
    json_object_set_new(o, "hooks", hooks);

    if (e->risk) {
        char id[sizeof e->risk->rule_id + 1], why[sizeof e->risk->reason + 1];
        memcpy(id, e->risk->rule_id, sizeof e->risk->rule_id);
        id[sizeof e->risk->rule_id] = '\0';
        memcpy(why, e->risk->reason, sizeof e->risk->reason);
        why[sizeof e->risk->reason] = '\0';
        json_object_set_new(o, "classifier",
                            json_pack("{s:s, s:o, s:o}", "level", risk_level_name(e->risk->level),
                                      "rule_id", id[0] ? text(id) : json_null(), "reason",
                                      why[0] ? text(why) : json_null()));
    } else {
        json_object_set_new(o, "classifier", json_null());
    }
    json_object_set_new(o, "model_classifier",
                        e->model == PERM_NONE ? json_null()
                                              : json_string(perm_verdict_name(e->model)));

    const perm_decision *d = e->decision;
    json_object_set_new(o, "decision", json_string(perm_verdict_name(d->verdict)));
    json_object_set_new(o, "source", str_or_null(d->source));
    json_object_set_new(o, "row", str_or_null(d->row));
    json_object_set_new(o, "reason", text(d->reason));
    json_object_set_new(o, "approval_id", text(e->approval_id));
    json_object_set_new(o, "duration_us", json_integer(e->duration_us));
    return o;
}

int audit_record(audit_log *log, const audit_entry *e)
{
    if (!log || !e || !e->decision)
        return -LOOM_ERR_INVALID_REQUEST;
    json_t *rec = build_record(e);
    pthread_mutex_lock(&log->lock);
    int rc = jsonl_append(log->fd, rec, NULL);
    pthread_mutex_unlock(&log->lock);
    json_decref(rec);
    return rc;
}

int audit_sync(audit_log *log)
{
    if (!log)
        return 0;
    pthread_mutex_lock(&log->lock);
    int rc = fdatasync(log->fd);
    pthread_mutex_unlock(&log->lock);
    return rc ? -LOOM_ERR_IO : 0;
}

void audit_close(audit_log *log)
{
    if (!log)
        return;
    fdatasync(log->fd);
    close(log->fd);
    pthread_mutex_destroy(&log->lock);
    free(log->path);
    free(log);
}
