/* slash_config.c — /config and /doctor (slash_config.h). /config lists
 * loom_agent_settings_json's keys with the layer that set each (local,
 * project, user, command line) and the lower layers it overrides, then the
 * files read; `set` goes through loom_agent_set_local_setting (the schema
 * checks the value) and reopens the agent so the value counts now. Values
 * come from settings files in the repository: printed through term_printf
 * (terminal-safe) and cut to the line. Main thread only. */
#include "surfaces/cli/slash_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/cli/doctor.h"

#define VALUE_COLS 60

static void show(slash_host *r)
{
    char *text = loom_agent_settings_json(r->agent);
    loom_error ignore;
    json_t *doc = text ? json_parse(text, strlen(text), "settings", &ignore) : NULL;
    free(text);
    const json_t *list = json_get_arr(doc, "settings");
    term_printf(&r->out, TONE_BOLD, "Settings");
    term_printf(&r->out, TONE_DIM, " (the value in effect and the layer that set it)\n");
    if (!json_array_size(list))
        term_printf(&r->out, TONE_DIM, "  none set: every value is Loom's default\n");
    size_t i;
    json_t *row;
    json_array_foreach((json_t *)list, i, row) {
        const json_t *v = json_object_get(row, "value");
        char *value = json_is_string(v) ? xstrdup(json_string_value(v)) : json_dump_compact(v);
        if (value && strlen(value) > VALUE_COLS)
            strcpy(value + VALUE_COLS - 3, "...");
        term_printf(&r->out, TONE_PLAIN, "  %-22s %s", json_get_str(row, "key", "?"),
                    value ? value : "");
        term_printf(&r->out, TONE_DIM, "  %s", json_get_str(row, "layer", "?"));
        const json_t *over = json_object_get(row, "overrides");
        if (json_array_size(over)) {
            loom_str s = LOOM_STR_INIT;
            size_t k;
            json_t *l;
            json_array_foreach((json_t *)over, k, l) str_printf(&s, "%s%s", k ? ", " : "",
                                                                json_string_value(l));
            term_printf(&r->out, TONE_DIM, " (over %s)", str_cstr(&s));
            str_free(&s);
        }
        term_printf(&r->out, TONE_PLAIN, "\n");
        free(value);
    }
    term_printf(&r->out, TONE_BOLD, "Files\n");
    static const char *const layers[] = {"local", "project", "user"};
    const json_t *files = json_object_get(doc, "files");
    for (size_t l = 0; l < 3; l++) {
        const json_t *paths = json_object_get(files, layers[l]);
        if (!json_array_size(paths)) {
            term_printf(&r->out, TONE_DIM, "  %-8s none\n", layers[l]);
            continue;
        }
        json_t *p;
        size_t k;
        json_array_foreach((json_t *)paths, k, p)
            term_printf(&r->out, TONE_PLAIN, "  %-8s %s\n", k ? "" : layers[l], json_string_value(p));
    }
    term_printf(&r->out, TONE_DIM, "/config set KEY VALUE writes .loom/settings.local.json "
                "(VALUE as JSON, else as text) \xc2\xb7 /config unset KEY removes it\n");
    json_decref(doc);
}

/* VALUE as JSON when it is JSON (true, 3, {"a":1}, "x"), else as a string. */
static char *as_json(const char *value)
{
    loom_error ignore;
    json_t *v = json_parse(value, strlen(value), "value", &ignore);
    if (!v)
        v = json_string(value);
    char *text = json_dump_compact(v);
    json_decref(v);
    return text;
}

static void set(slash_host *r, const char *key, size_t key_len, const char *value)
{
    char *k = xstrndup(key, key_len);
    char *json = value ? as_json(value) : NULL;
    loom_status st;
    if (loom_agent_set_local_setting(r->agent, k, json, &st) != 0) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
    } else if (r->ops->reopen(r, NULL, &st) != 0) {
        term_printf(&r->out, TONE_YELLOW, "Written, but the agent could not be reopened with it: "
                    "%s\n", st.message);
    } else if (json) {
        term_printf(&r->out, TONE_PLAIN, "Set %s = %s", k, json);
        term_printf(&r->out, TONE_DIM, " in .loom/settings.local.json (counts from now)\n");
    } else {
        term_printf(&r->out, TONE_PLAIN, "Removed %s", k);
        term_printf(&r->out, TONE_DIM, " from .loom/settings.local.json\n");
    }
    free(json);
    free(k);
}

void slash_config(slash_host *r, const char *args)
{
    if (!*args) {
        show(r);
        return;
    }
    bool is_set = !strncmp(args, "set", 3) && (args[3] == ' ' || args[3] == '\t');
    bool is_unset = !strncmp(args, "unset", 5) && (args[5] == ' ' || args[5] == '\t');
    const char *key = is_set ? args + 3 : is_unset ? args + 5 : NULL;
    if (key) {
        key += strspn(key, " \t");
        size_t len = strcspn(key, " \t");
        const char *value = key + len;
        value += strspn(value, " \t");
        if (len && (is_unset ? !*value : *value != '\0')) {
            set(r, key, len, is_unset ? NULL : value);
            return;
        }
    }
    term_printf(&r->out, TONE_YELLOW, "usage: /config shows the settings \xc2\xb7 /config set KEY "
                "VALUE \xc2\xb7 /config unset KEY\n");
}

void slash_doctor(slash_host *r, const char *args)
{
    (void)args;
    doctor_show_agent(&r->out, r->agent, r->cwd);
}
