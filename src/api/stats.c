/* stats.c — loom_stats_json (loom.h): `loom stats` over every session file
 * under loom_home()/projects: each project's <id>.jsonl and the sub-agent
 * sidechains beside it (<id>.jsonl.mf/subagents/<agent>.jsonl, written by
 * agents/runner.c), aggregated by session/stats.c and priced from the
 * dated table (provider/models.c). */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/internal.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"
#include "provider/models.h"
#include "net/http.h"
#include "session/stats.h"
#include "session/stats_server.h"

static bool table_price(void *ctx, const char *model, long long input, long long output,
                        long long cache_write, long long cache_read, double *usd)
{
    (void)ctx;
    model_price p;
    if (!models_price(models_resolve(model), &p))
        return false;
    *usd = model_price_cost(&p, input, output, cache_write, cache_read, 0);
    return true;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

static bool is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void add_file(stats *s, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    loom_error err = {0};
    if (file_read_all(path, &text, &len, &err) != 0) {
        stats_add_unreadable(s);
        loom_error_clear(&err);
        return;
    }
    stats_add_session(s, text, len);
    free(text);
}

/* Every *.jsonl directly in dir; with sidechains, each session's
 * <file>.mf/subagents too. Entries are sorted so runs count in a fixed
 * order. */
static void add_dir(stats *s, const char *dir, bool sidechains)
{
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        loom_str path = LOOM_STR_INIT;
        str_printf(&path, "%s/%s", dir, name);
        if (name[0] != '.' && ends_with(name, ".jsonl") && !is_dir(str_cstr(&path))) {
            add_file(s, str_cstr(&path));
            if (sidechains) {
                loom_str sub = LOOM_STR_INIT;
                str_printf(&sub, "%s.mf/subagents", str_cstr(&path));
                if (is_dir(str_cstr(&sub)))
                    add_dir(s, str_cstr(&sub), false);
                str_free(&sub);
            }
        }
        str_free(&path);
        free(names[i]);
    }
    free(names);
}

static bool valid_day(const char *d)
{
    if (strlen(d) != 10)
        return false;
    for (int i = 0; i < 10; i++)
        if (i == 4 || i == 7 ? d[i] != '-' : (d[i] < '0' || d[i] > '9'))
            return false;
    return true;
}

static int parse_by(const char *by, stats_by *group, loom_status *st)
{
    if (by && !stats_by_parse(by, group))
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST,
                              "stats: --by %s: expected day, model, project or agent", by);
    return 0;
}

static char *finish(stats *s, loom_status *st)
{
    json_t *o = stats_to_json(s);
    stats_free(s);
    char *text = json_dump_compact(o);
    json_decref(o);
    api_status_ok(st);
    return text;
}

char *loom_stats_file_json(const char *path, const char *by, loom_status *st)
{
    stats_by group = STATS_BY_MODEL;
    if (!path) {
        api_status_set(st, LOOM_ERR_INVALID_REQUEST, "stats: no session file");
        return NULL;
    }
    if (parse_by(by, &group, st) != 0)
        return NULL;
    stats s;
    stats_init(&s, group, NULL, table_price, NULL);
    add_file(&s, path);
    loom_str sub = LOOM_STR_INIT;
    str_printf(&sub, "%s.mf/subagents", path);
    if (is_dir(str_cstr(&sub)))
        add_dir(&s, str_cstr(&sub), false);
    str_free(&sub);
    return finish(&s, st);
}

char *loom_stats_json(const char *by, const char *since, loom_status *st)
{
    stats_by group = STATS_BY_DAY;
    if (parse_by(by, &group, st) != 0)
        return NULL;
    if (since && !valid_day(since)) {
        api_status_set(st, LOOM_ERR_INVALID_REQUEST, "stats: --since %s: expected YYYY-MM-DD",
                       since);
        return NULL;
    }
    stats s;
    stats_init(&s, group, since, table_price, NULL);
    char *home = loom_home();
    loom_str projects = LOOM_STR_INIT;
    str_printf(&projects, "%s/projects", home ? home : ".");
    free(home);
    struct dirent **names = NULL;
    int n = scandir(str_cstr(&projects), &names, NULL, alphasort);
    for (int i = 0; i < n; i++) {
        loom_str dir = LOOM_STR_INIT;
        str_printf(&dir, "%s/%s", str_cstr(&projects), names[i]->d_name);
        if (names[i]->d_name[0] != '.' && is_dir(str_cstr(&dir)))
            add_dir(&s, str_cstr(&dir), true);
        str_free(&dir);
        free(names[i]);
    }
    free(names);
    str_free(&projects);
    return finish(&s, st);
}

/* Pages of GET /usage to read at most: 100 runs each, so a million runs. */
#define STATS_SERVER_PAGES_MAX 10000

static int collect_body(void *ctx, const char *data, size_t n)
{
    str_append(ctx, data, n);
    return 0;
}

/* The page's URL: the cursor is opaque, so every byte outside the
 * unreserved set is percent-encoded. */
static void page_url(loom_str *url, const char *base, const char *cursor)
{
    str_clear(url);
    size_t n = strlen(base);
    while (n > 0 && base[n - 1] == '/')
        n--;
    str_printf(url, "%.*s/usage?limit=100", (int)n, base);
    if (!cursor)
        return;
    str_puts(url, "&cursor=");
    for (const unsigned char *c = (const unsigned char *)cursor; *c; c++) {
        if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
            strchr("-._~", *c))
            str_append(url, (const char *)c, 1);
        else
            str_printf(url, "%%%02X", *c);
    }
}

char *loom_stats_server_json(const char *server_url, const char *token, const char *by,
                             const char *since, loom_status *st)
{
    stats_by group = STATS_BY_DAY;
    if (!server_url || strncmp(server_url, "http", 4) != 0) {
        api_status_set(st, LOOM_ERR_INVALID_REQUEST, "stats: --server %s: expected an http(s) URL",
                       server_url ? server_url : "(none)");
        return NULL;
    }
    if (parse_by(by, &group, st) != 0)
        return NULL;
    if (since && !valid_day(since)) {
        api_status_set(st, LOOM_ERR_INVALID_REQUEST, "stats: --since %s: expected YYYY-MM-DD",
                       since);
        return NULL;
    }
    http_global_init();
    stats s;
    stats_init(&s, group, since, NULL, NULL);
    loom_str auth = LOOM_STR_INIT, url = LOOM_STR_INIT, body = LOOM_STR_INIT;
    if (token && *token)
        str_printf(&auth, "Authorization: Bearer %s", token);
    const char *headers[] = {"Accept: application/json", token && *token ? str_cstr(&auth) : NULL,
                             NULL};
    char *cursor = NULL;
    int rc = 0;
    for (int pages = 0; pages < STATS_SERVER_PAGES_MAX && rc == 0; pages++) {
        page_url(&url, server_url, cursor);
        str_clear(&body);
        http_request req = {.method = "GET", .url = str_cstr(&url), .headers = headers,
                            .connect_timeout_ms = 5000, .idle_timeout_ms = 30000};
        http_response resp;
        memset(&resp, 0, sizeof resp);
        loom_error err;
        loom_error_clear(&err);
        if (http_perform(&req, collect_body, &body, &resp, &err) != 0) {
            rc = api_status_set(st, LOOM_ERR_IO, "stats: GET %s: %s", str_cstr(&url),
                                err.message);
        } else if (resp.status != 200) {
            rc = api_status_set(st, LOOM_ERR_IO, "stats: GET %s: HTTP %ld %.200s",
                                str_cstr(&url), resp.status, str_cstr(&resp.error_body));
        } else {
            char why[200];
            free(cursor);
            cursor = NULL;
            if (stats_add_usage_page(&s, str_cstr(&body), body.len, &cursor, why, sizeof why) < 0)
                rc = api_status_set(st, LOOM_ERR_IO, "stats: GET %s: %s",
                                    str_cstr(&url), why);
        }
        http_response_free(&resp);
        if (!cursor)
            break;
    }
    free(cursor);
    str_free(&auth);
    str_free(&url);
    str_free(&body);
    if (rc != 0) {
        stats_free(&s);
        return NULL;
    }
    return finish(&s, st);
}
