/* managed.c — reading the mode disables (managed.h): the managed settings
 * file(s) first, then the user's, the project's and the local settings
 * documents. Each file can only add a disable. Threading: none. */
#include "governance/managed.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/str.h"

static const char *const KEYS[] = {"disableBypassPermissionsMode", "disableAutoMode"};

/* One document's disables into d; where names it in messages. -1 with err
 * for a value other than "disable". */
static int read_doc(const json_t *doc, const char *where, mode_disables *d, loom_error *err)
{
    if (!json_is_object(doc))
        return 0;
    const json_t *perms = json_object_get(doc, "permissions");
    const json_t *scopes[] = {json_is_object(perms) ? perms : NULL, doc};
    for (size_t k = 0; k < 2; k++) {
        for (size_t s = 0; s < 2; s++) {
            json_t *v = scopes[s] ? json_object_get(scopes[s], KEYS[k]) : NULL;
            if (!v || json_is_null(v))
                continue;
            const char *str = json_string_value(v);
            if (!str || strcmp(str, "disable") != 0)
                return loom_error_set(err, LOOM_ERR_CONFIG,
                                      "%s: %s%s must be \"disable\" (the only value it takes)",
                                      where, s == 0 ? "permissions." : "", KEYS[k]);
            char **slot = k == 0 ? &d->bypass_by : &d->auto_by;
            if (!*slot) {
                loom_str w = LOOM_STR_INIT;
                str_printf(&w, "%s (%s%s)", where, s == 0 ? "permissions." : "", KEYS[k]);
                *slot = str_steal(&w);
            }
        }
    }
    return 0;
}

/* A managed file: absent is fine; anything else that is wrong is an error. */
static int read_managed(const char *path, mode_disables *d, loom_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
    char *data = NULL;
    size_t len = 0;
    loom_error e;
    if (file_read_all(path, &data, &len, &e) != 0)
        return loom_error_set(err, LOOM_ERR_CONFIG, "the managed settings file %s: %s", path,
                              e.message);
    json_error_t je;
    json_t *doc = json_loadb(data, len, 0, &je);
    free(data);
    if (!json_is_object(doc)) {
        json_decref(doc);
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "the managed settings file %s is not a JSON object (line %d: %s)",
                              path, je.line, doc ? "not an object" : je.text);
    }
    char where[600];
    snprintf(where, sizeof where, "the managed settings file %s", path);
    int rc = read_doc(doc, where, d, err);
    json_decref(doc);
    return rc;
}

int mode_disables_load(const json_t *user, const json_t *project, const json_t *local,
                       mode_disables *out, loom_error *err)
{
    memset(out, 0, sizeof *out);
    const char *extra = getenv("LOOM_MANAGED_SETTINGS");
    if (read_managed(LOOM_MANAGED_SETTINGS_FILE, out, err) != 0 ||
        (extra && *extra && read_managed(extra, out, err) != 0) ||
        read_doc(user, "the user settings", out, err) != 0 ||
        read_doc(project, "the project settings", out, err) != 0 ||
        read_doc(local, "the local settings", out, err) != 0) {
        mode_disables_free(out);
        return -1;
    }
    return 0;
}

void mode_disables_free(mode_disables *d)
{
    free(d->bypass_by);
    free(d->auto_by);
    d->bypass_by = d->auto_by = NULL;
}

bool mode_disables_allow(const mode_disables *d, perm_mode m, char *why, size_t cap)
{
    const char *by = (m == MODE_BYPASS || m == MODE_FULL_ACCESS) ? d->bypass_by
                     : m == MODE_AUTO                            ? d->auto_by
                                                                 : NULL;
    if (!by)
        return true;
    if (why && cap)
        snprintf(why, cap, "%s mode is disabled by %s", perm_mode_name(m), by);
    return false;
}
