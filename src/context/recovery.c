/* recovery.c — the files the task was working on, re-read after a
 * compaction (see recovery.h). Includes policy/secrets.h along the
 * context → policy edge: a credential store is never read into a request. */
#include "context/recovery.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "policy/secrets.h"
#include "session/record.h"

/* A file read whole before it is cut: larger ones are named, not read. */
#define RECOVERY_READ_CAP (4u << 20)

static const char *path_of_call(const json_t *call, json_t **args)
{
    static const char *const tools[] = {"Read", "Edit", "MultiEdit", "Write", "NotebookEdit"};
    const char *name = json_get_str(call, "name", "");
    bool known = false;
    for (size_t i = 0; i < sizeof tools / sizeof *tools; i++)
        known |= !strcmp(name, tools[i]);
    if (!known)
        return NULL;
    *args = json_loads(json_get_str(call, "arguments", "{}"), 0, NULL);
    const char *p = json_get_str(*args, "file_path", NULL);
    if (!p)
        p = json_get_str(*args, "notebook_path", NULL);
    return p && *p ? p : NULL;
}

/* Did the call with this id get a result that is not an error? */
static bool call_succeeded(json_t *const *chain, size_t n, size_t from, const char *id)
{
    for (size_t i = from + 1; i < n && id; i++) {
        const char *type = record_type(chain[i]);
        if (type && !strcmp(type, RECORD_FUNCTION_CALL_RESULT) &&
            !strcmp(json_get_str(chain[i], "callId", ""), id))
            return !json_get_bool(chain[i], "isError", false);
    }
    return false;
}

json_t *recovery_recent_files(json_t *const *chain, size_t n, const char *cwd, size_t max)
{
    json_t *out = json_array();
    for (size_t i = n; i-- > 0 && json_array_size(out) < max;) {
        const char *type = record_type(chain[i]);
        if (!type || strcmp(type, RECORD_FUNCTION_CALL) != 0)
            continue;
        json_t *args = NULL;
        const char *p = path_of_call(chain[i], &args);
        if (p && call_succeeded(chain, n, i, json_get_str(chain[i], "callId", NULL))) {
            loom_str abs = LOOM_STR_INIT;
            if (p[0] == '/' || !cwd)
                str_puts(&abs, p);
            else
                str_printf(&abs, "%s/%s", cwd, p);
            bool seen = false;
            size_t k;
            json_t *v;
            json_array_foreach(out, k, v) seen |= !strcmp(json_string_value(v), str_cstr(&abs));
            if (!seen && !secrets_path_is_secret(str_cstr(&abs), cwd, NULL, NULL, 0))
                json_array_append_new(out, json_string(str_cstr(&abs)));
            str_free(&abs);
        }
        json_decref(args);
    }
    return out;
}

char *recovery_files_text(const json_t *paths, size_t total_cap)
{
    size_t count = json_array_size(paths);
    if (!count)
        return NULL;
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "The conversation was compacted. These are the files you were working on, "
                 "re-read from disk just now (newest first); where the summary shows an older "
                 "version, these are current. Your plan is in <working-memory>.\n");
    size_t each = total_cap / count;
    if (each > RECOVERY_FILE_BYTES)
        each = RECOVERY_FILE_BYTES;
    size_t i;
    json_t *v;
    json_array_foreach(paths, i, v) {
        const char *path = json_string_value(v);
        loom_str why = LOOM_STR_INIT;
        char *text = file_read_text(path, RECOVERY_READ_CAP, FILE_TEXT_NO_NUL, &why);
        if (!text) {
            str_printf(&s, "<file path=\"%s\" unavailable=\"%s\"/>\n", path, str_cstr(&why));
        } else {
            loom_str body = LOOM_STR_INIT;
            str_puts(&body, text);
            str_cut_middle(&body, each, "of this file");
            str_printf(&s, "<file path=\"%s\">\n%s\n</file>\n", path, str_cstr(&body));
            str_free(&body);
            free(text);
        }
        str_free(&why);
    }
    return str_steal(&s);
}
