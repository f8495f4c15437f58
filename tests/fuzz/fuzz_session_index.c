/* fuzz_session_index.c — libFuzzer target for the session index
 * (session/session_index.h), the file beside a session that a resume
 * trusts only after checking it:
 *   - session_index_parse over the input: on success every entry has a
 *     non-empty type and id, and encoding the entries again gives the same
 *     bytes (the parser accepts exactly what the encoder writes);
 *   - transcript_open of a small fixed session file with the input as its
 *     index (the device and inode in the header patched to the file's, so
 *     the checks past them run): whatever the index says, the open never
 *     crashes, and the request the session would send — the active chain —
 *     is the one the whole read gives, record for record.
 * Any disagreement aborts. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/str.h"
#include "session/session_index.h"
#include "session/transcript.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char session_lines[] =
    "{\"type\":\"session-meta\",\"id\":\"m\",\"parentId\":null,\"cwd\":\"/x\"}\n"
    "{\"type\":\"message\",\"id\":\"u1\",\"parentId\":null,\"role\":\"user\",\"content\":\"a\"}\n"
    "{\"type\":\"message\",\"id\":\"a1\",\"parentId\":\"u1\",\"role\":\"assistant\",\"content\":\"b\"}\n"
    "{\"type\":\"summary\",\"id\":\"s1\",\"parentId\":null,\"logicalParentId\":\"a1\","
    "\"summary\":\"c\"}\n"
    "{\"type\":\"message\",\"id\":\"u2\",\"parentId\":\"s1\",\"role\":\"user\",\"content\":\"d\"}\n"
    "{\"type\":\"message\",\"id\":\"u3\",\"parentId\":\"a1\",\"role\":\"user\",\"content\":\"e\"}\n"
    "{\"type\":\"message\",\"id\":\"a3\",\"parentId\":\"u3\",\"role\":\"assistant\",\"content\":\"f\"}\n";

static char dir[64], session_path[128], index_path[128];

static void cleanup(void)
{
    unlink(index_path);
    unlink(session_path);
    rmdir(dir);
}

static void setup(void)
{
    if (dir[0])
        return;
    snprintf(dir, sizeof dir, "/tmp/loom-fuzz-index.XXXXXX");
    if (!mkdtemp(dir))
        abort();
    snprintf(session_path, sizeof session_path, "%s/s.jsonl", dir);
    snprintf(index_path, sizeof index_path, "%s/s.idx", dir);
    FILE *f = fopen(session_path, "wb");
    if (!f || fwrite(session_lines, 1, sizeof session_lines - 1, f) != sizeof session_lines - 1)
        abort();
    fclose(f);
    atexit(cleanup);
}

static void check_parse(const uint8_t *data, size_t size)
{
    session_index_entry *e = NULL;
    size_t n = 0;
    uint64_t dev, ino;
    loom_error err;
    if (session_index_parse((const char *)data, size, &dev, &ino, &e, &n, &err) != 0)
        return;
    loom_str again = LOOM_STR_INIT;
    session_index_encode_header(&again, dev, ino);
    for (size_t i = 0; i < n; i++) {
        if (!e[i].type || !*e[i].type || !e[i].id || !*e[i].id)
            abort();
        session_index_encode(&again, &e[i]);
    }
    if (again.len != size || memcmp(again.ptr, data, size) != 0)
        abort();
    str_free(&again);
    free(e);
}

/* The ids of the active chain, joined. Caller frees. */
static char *chain_ids(transcript *t)
{
    json_t **chain = NULL;
    size_t n = 0;
    transcript_active(t, &chain, &n);
    loom_str s = LOOM_STR_INIT;
    for (size_t i = 0; i < n; i++) {
        char *line = json_dumps(chain[i], JSON_COMPACT | JSON_SORT_KEYS);
        str_puts(&s, line);
        str_putc(&s, '\n');
        free(line);
    }
    free(chain);
    return str_steal(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_parse(data, size);
    setup();
    uint8_t *idx = malloc(size ? size : 1);
    memcpy(idx, data, size);
    struct stat st;
    if (stat(session_path, &st) != 0)
        abort();
    if (size >= SESSION_INDEX_HEADER_LEN) {
        for (int i = 0; i < 8; i++) {
            idx[SESSION_INDEX_MAGIC_LEN + i] = (uint8_t)((uint64_t)st.st_dev >> (8 * i));
            idx[SESSION_INDEX_MAGIC_LEN + 8 + i] = (uint8_t)((uint64_t)st.st_ino >> (8 * i));
        }
    }
    FILE *f = fopen(index_path, "wb");
    if (!f || (size && fwrite(idx, 1, size, f) != size))
        abort();
    fclose(f);
    free(idx);
    loom_error err;
    transcript *whole = transcript_parse(session_lines, sizeof session_lines - 1, "whole");
    transcript *t = transcript_open(session_path, &err);
    if (!t)
        abort();
    char *a = chain_ids(whole), *b = chain_ids(t);
    if (strcmp(a, b) != 0)
        abort();
    free(a);
    free(b);
    transcript_free(t);
    transcript_free(whole);
    return 0;
}
