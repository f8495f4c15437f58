/* config_view.c — loom_agent_settings_json: the agent's effective settings,
 * key by key, and which layer set each (the local, project or user
 * settings file, or the command line and environment, which win over
 * files). What /config shows (docs/repl.md). Reads only the agent's
 * documents; thread-safe for distinct agents. */
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "base/json.h"

static const char *const layer_names[3] = {"user", "project", "local"};

/* The settings files of a layer the agent loaded (sources: config.c's list). */
static json_t *layer_paths(const json_t *sources, const char *level)
{
    json_t *paths = json_array();
    size_t i;
    json_t *f;
    json_array_foreach((json_t *)sources, i, f) {
        if (!strcmp(json_get_str(f, "kind", ""), "settings") &&
            !strcmp(json_get_str(f, "level", ""), level) &&
            strcmp(json_get_str(f, "state", ""), "skipped") != 0)
            json_array_append_new(paths, json_string(json_get_str(f, "path", "")));
    }
    return paths;
}

/* An option's value as the option table holds it (text), from a settings
 * document's value: what config.c's apply_settings would have put there. */
static bool same_value(const json_t *doc_value, const char *option_text)
{
    if (!option_text)
        return false;
    if (json_is_string(doc_value))
        return !strcmp(json_string_value(doc_value), option_text);
    char *text = json_dump_compact(doc_value);
    bool same = text && !strcmp(text, option_text);
    free(text);
    return same;
}

char *loom_agent_settings_json(loom_agent *a)
{
    if (!a)
        return NULL;
    json_t *list = json_array();
    json_t *seen = json_object();
    /* Keys of the settings files: the highest layer holding one wins. */
    for (int i = 2; i >= 0; i--) {
        const char *key;
        json_t *v;
        json_object_foreach(a->files[i], key, v) {
            if (json_object_get(seen, key))
                continue;
            json_t *shadowed = json_array();
            for (int k = i - 1; k >= 0; k--)
                if (json_object_get(a->files[k], key))
                    json_array_append_new(shadowed, json_string(layer_names[k]));
            const char *layer = layer_names[i];
            /* A flag or the environment gave the option another value. */
            const char *opt = api_value(a->values, key);
            if (opt && !same_value(v, opt)) {
                json_array_insert_new(shadowed, 0, json_string(layer));
                layer = "command line";
                v = json_string(opt);
            } else {
                json_incref(v);
            }
            json_t *row = json_pack("{s:s,s:o,s:s}", "key", key, "value", v, "layer", layer);
            if (json_array_size(shadowed))
                json_object_set_new(row, "overrides", shadowed);
            else
                json_decref(shadowed);
            json_array_append_new(list, row);
            json_object_set_new(seen, key, json_true());
        }
    }
    /* Options no file holds: the command line's (or a setting renamed on
     * load, as permissions.defaultMode → permission_mode). */
    const char *key;
    json_t *v;
    json_object_foreach(a->values, key, v) {
        if (json_object_get(seen, key) || !json_is_string(v))
            continue;
        json_array_append_new(list, json_pack("{s:s,s:O,s:s}", "key", key, "value", v, "layer",
                                              "command line"));
    }
    json_decref(seen);
    json_t *files = json_object();
    for (int i = 0; i < 3; i++)
        json_object_set_new(files, layer_names[i], layer_paths(a->sources, layer_names[i]));
    json_t *doc = json_pack("{s:o,s:o}", "settings", list, "files", files);
    char *text = json_dump_compact(doc);
    json_decref(doc);
    return text;
}
