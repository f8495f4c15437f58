/* trust.c — workspace trust (trust.h): the trustedWorkspaces check, the
 * tighten-only filter for a repository's settings documents, and recording
 * a folder the user chose to trust.
 *
 * The filter is a table of the keys an untrusted document may carry and how
 * each is judged; anything not in the table is dropped with a notice. No
 * state; thread-safe. */
#include "policy/trust.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"

/* ---- is the folder trusted ---------------------------------------------- */

static bool under(const char *cwd, const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    if (n == 1 && dir[0] == '/')
        return cwd[0] == '/';
    return n && strncmp(cwd, dir, n) == 0 && (cwd[n] == '\0' || cwd[n] == '/');
}

bool trust_workspace_trusted(const json_t *user, const char *cwd)
{
    const char *env = getenv("LOOM_TRUST_WORKSPACE");
    if (env && !strcmp(env, "1"))
        return true;
    /* The user settings' own env block is the user's word as well (it is
     * exported only after this question is settled). */
    env = json_get_str(json_get_obj(user, "env"), "LOOM_TRUST_WORKSPACE", NULL);
    if (env && !strcmp(env, "1"))
        return true;
    if (!cwd)
        return false;
    const json_t *list = json_get_arr(user, "trustedWorkspaces");
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p) {
        const char *dir = json_string_value(p);
        if (!dir || dir[0] != '/')
            continue; /* a relative entry would trust whatever folder is current */
        if (under(cwd, dir))
            return true;
        char *real = realpath(dir, NULL);
        bool hit = real && under(cwd, real);
        free(real);
        if (hit)
            return true;
    }
    return false;
}

/* ---- notices ---------------------------------------------------------------- */

/* A key path as it can be shown: control bytes become '?'. */
static void put_key(loom_str *out, const char *key)
{
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        str_putc(out, *p < 0x20 || *p == 0x7f ? '?' : (char)*p);
}

static void notice(json_t *notices, const char *file, const char *path, const json_t *value)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "ignored %s: ", file);
    put_key(&s, path);
    if (value && !json_is_object(value)) {
        /* JSON text escapes control characters; long values are cut. */
        char *text = json_dump_compact(value);
        if (text) {
            size_t n = strlen(text);
            const size_t cap = 80;
            str_putc(&s, ' ');
            if (n > cap) {
                size_t cut = cap; /* back to the start of a UTF-8 character */
                while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80)
                    cut--;
                str_append(&s, text, cut);
                str_puts(&s, "\xe2\x80\xa6");
            } else {
                str_puts(&s, text);
            }
            free(text);
        }
    }
    str_puts(&s, " \xe2\x80\x94 " TRUST_HINT);
    json_array_append_new(notices, json_string(s.ptr));
    str_free(&s);
}

/* path = prefix.key (or key alone). */
static void notice_at(json_t *notices, const char *file, const char *prefix, const char *key,
                      const json_t *value)
{
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s%s%s", prefix ? prefix : "", prefix ? "." : "", key);
    notice(notices, file, p.ptr, value);
    str_free(&p);
}

/* ---- modes ------------------------------------------------------------------ */

/* Strictness: plan < dontAsk < default < the rest (incomparable among
 * themselves). dontAsk denies whatever default would ask. */
static int mode_rank(const char *m)
{
    static const char *const looser[] = {"acceptEdits", "auto",        "bypassPermissions",
                                         "fullAccess",  "delegate",    NULL};
    if (!strcmp(m, "plan"))
        return 0;
    if (!strcmp(m, "dontAsk"))
        return 1;
    if (!strcmp(m, "default"))
        return 2;
    for (size_t i = 0; looser[i]; i++)
        if (!strcmp(m, looser[i]))
            return 3;
    return -1;
}

bool trust_mode_tightens(const char *mode, const char *user_mode)
{
    if (!mode)
        return false;
    int r = mode_rank(mode);
    if (r < 0)
        return false;
    const char *base = user_mode ? user_mode : "default";
    if (!strcmp(mode, base))
        return true;
    int b = mode_rank(base);
    return r < 3 && (b < 0 || r < b);
}

/* ---- limits ----------------------------------------------------------------- */

/* A limit as a number: JSON numbers, or text like "200000", "500k", "1.5m"
 * (token_budget's amounts, "+" allowed). false when it is neither. */
static bool limit_value(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    const char *s = json_string_value(v);
    if (!s)
        return false;
    if (*s == '+')
        s++;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (errno || end == s)
        return false;
    if (*end == 'k' || *end == 'K')
        d *= 1e3, end++;
    else if (*end == 'm' || *end == 'M')
        d *= 1e6, end++;
    else if (*end == 'b' || *end == 'B')
        d *= 1e9, end++;
    if (*end)
        return false;
    *out = d;
    return true;
}

/* Keys whose 0 means "no limit". */
static bool zero_is_unlimited(const char *key)
{
    return !strcmp(key, "max_tokens_total") || !strcmp(key, "max_usd");
}

/* Is p (for key) within the user's limit under base_key? */
static bool within(const char *key, double p, const char *base_key, const json_t *base)
{
    const json_t *bv = json_object_get(base, base_key);
    if (!bv)
        return true; /* the user set no limit: any limit is one more */
    double b;
    if (!limit_value(bv, &b))
        return false;
    bool p_unlimited = zero_is_unlimited(key) && p == 0;
    bool b_unlimited = zero_is_unlimited(base_key) && b == 0;
    if (b_unlimited)
        return true;
    return !p_unlimited && p <= b;
}

/* max_tokens_total and token_budget are one cap spelled two ways, and the
 * first wins where both are set (agent.c): a document's max_tokens_total
 * over the user's token_budget would replace it, so each is judged
 * against the user's value of either. */
static bool limit_tightens(const char *key, const json_t *v, const json_t *base)
{
    double p;
    if (!limit_value(v, &p) || p < 0 || p != p)
        return false;
    bool tokens = !strcmp(key, "max_tokens_total") || !strcmp(key, "token_budget");
    if (!tokens)
        return within(key, p, key, base);
    return within(key, p, "max_tokens_total", base) && within(key, p, "token_budget", base);
}

/* ---- the documents ------------------------------------------------------------ */

/* What may stay of the "sandbox" block: only values that confine more. The
 * block is merged over the user's (sandbox_policy.c): scalars replace, the
 * denyRead list adds up. */
static json_t *filter_sandbox(const json_t *block, const char *file, json_t *notices)
{
    json_t *out = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)block, key, v) {
        bool keep = false;
        if (!strcmp(key, "enabled") || !strcmp(key, "hooks"))
            keep = json_is_true(v);
        else if (!strcmp(key, "writableTempDirs"))
            keep = json_is_false(v);
        else if (!strcmp(key, "denyRead"))
            keep = json_is_array(v);
        else if (!strcmp(key, "network"))
            keep = json_is_string(v) && !strcmp(json_string_value(v), "deny");
        else if (!strcmp(key, "onUnsupported"))
            keep = json_is_string(v) && !strcmp(json_string_value(v), "refuse");
        if (keep)
            json_object_set(out, key, v);
        else
            notice_at(notices, file, "sandbox", key, v);
    }
    return out;
}

static json_t *filter_permissions(const json_t *perms, const char *file, const json_t *base,
                                  json_t *notices)
{
    json_t *out = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)perms, key, v) {
        if ((!strcmp(key, "deny") || !strcmp(key, "ask")) && json_is_array(v)) {
            json_object_set(out, key, v); /* governance checks each rule */
        } else if ((!strcmp(key, "disableBypassPermissionsMode") ||
                    !strcmp(key, "disableAutoMode")) &&
                   json_is_string(v) && !strcmp(json_string_value(v), "disable")) {
            json_object_set(out, key, v); /* a mode switched off only tightens */
        } else if (!strcmp(key, "allow") && json_is_array(v)) {
            size_t i;
            json_t *r;
            json_array_foreach(v, i, r) {
                char at[64];
                snprintf(at, sizeof at, "permissions.allow[%zu]", i);
                notice(notices, file, at, r);
            }
        } else if (!strcmp(key, "defaultMode") && json_is_string(v) &&
                   trust_mode_tightens(json_string_value(v),
                                       json_string_value(json_object_get(base, "permission_mode")))) {
            json_object_set(out, key, v);
        } else {
            notice_at(notices, file, "permissions", key, v);
        }
    }
    return out;
}

/* Options a document may set whatever their value: they change how the run
 * is carried out, not what it may do or where requests go. An output style
 * only names one: an untrusted folder's own style files are never loaded
 * (ext/sources.h), so it can pick a built-in or one of the user's. */
static const char *const neutral_keys[] = {
    "$schema", "stream", "auto_compact", "compaction", "renew_lambda", "heartbeat",
    "output_style", "outputStyle", NULL,
};
/* Limits: kept when at least as strict as the user's (base). */
static const char *const limit_keys[] = {
    "max_turns",      "max_tokens_total",  "max_usd", "token_budget",
    "context_window", "max_output_tokens", NULL,
};

static bool in(const char *const *list, const char *key)
{
    for (size_t i = 0; list[i]; i++)
        if (!strcmp(list[i], key))
            return true;
    return false;
}

json_t *trust_filter(const json_t *doc, const char *file, const json_t *base, json_t *notices)
{
    json_t *out = json_object();
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)doc, key, v) {
        if (in(neutral_keys, key)) {
            json_object_set(out, key, v);
        } else if (!strcmp(key, "hooks")) {
            /* Kept for the registry, which skips untrusted hooks: one notice
             * per event here, the registry's own when one would fire. */
            json_object_set(out, key, v);
            const char *ev;
            json_t *groups;
            json_object_foreach(v, ev, groups) notice_at(notices, file, "hooks", ev, NULL);
        } else if (!strcmp(key, "permissions") && json_is_object(v)) {
            json_object_set_new(out, key, filter_permissions(v, file, base, notices));
        } else if (!strcmp(key, "sandbox") && json_is_object(v)) {
            json_object_set_new(out, key, filter_sandbox(v, file, notices));
        } else if (!strcmp(key, "permission_mode") && json_is_string(v) &&
                   trust_mode_tightens(json_string_value(v),
                                       json_string_value(json_object_get(base, "permission_mode")))) {
            json_object_set(out, key, v);
        } else if (!strcmp(key, "disallowed_tools") && json_is_string(v)) {
            json_object_set(out, key, v);
        } else if (!strcmp(key, "disabledMcpjsonServers") && json_is_array(v)) {
            json_object_set(out, key, v); /* it only keeps servers from starting */
        } else if (in(limit_keys, key) && limit_tightens(key, v, base)) {
            json_object_set(out, key, v);
        } else if (!strcmp(key, "env") && json_is_object(v) && json_object_size(v)) {
            const char *name;
            json_t *val;
            json_object_foreach(v, name, val) notice_at(notices, file, "env", name, val);
        } else {
            notice(notices, file, key, v);
        }
    }
    return out;
}

/* ---- remembering ---------------------------------------------------------------- */

int trust_remember(const char *path, const char *dir, loom_error *err)
{
    json_t *doc = NULL;
    if (settings_read(path, &doc, err) != 0) {
        loom_error_prefix(err, "not changed");
        return -(int)err->code;
    }
    if (!doc)
        doc = json_object();
    json_t *list = json_object_get(doc, "trustedWorkspaces");
    if (list && !json_is_array(list)) {
        json_decref(doc);
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "%s: \"trustedWorkspaces\" is not a list; not changed", path);
    }
    if (!list) {
        list = json_array();
        json_object_set_new(doc, "trustedWorkspaces", list);
    }
    bool have = false;
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p) have = have || (json_is_string(p) && !strcmp(json_string_value(p), dir));
    if (!have)
        json_array_append_new(list, json_string(dir));
    char *out = json_dumps(doc, JSON_INDENT(2));
    json_decref(doc);
    /* The folder the file lives in. */
    char *slash = strrchr(path, '/');
    int rc = 0;
    if (slash && slash != path) {
        char *parent = xstrndup(path, (size_t)(slash - path));
        rc = file_mkdirs(parent, 0700, err);
        free(parent);
    }
    if (rc == 0) {
        loom_str body = LOOM_STR_INIT;
        str_printf(&body, "%s\n", out);
        rc = file_write_atomic(path, body.ptr, body.len, 0600, err);
        str_free(&body);
    }
    free(out);
    return rc;
}
