/* memory_cmd.c — `loom memory` (see memory_cmd.h): prints what
 * loom_memory_json reports, through base/termsafe.h (the entries are a
 * repository's text). Threading: the main thread only. */
#include "surfaces/cli/memory_cmd.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/termsafe.h"
#include "loom.h"

static const char *str(const json_t *o, const char *key, const char *dflt)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : dflt;
}

static const char *base(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void print_doc(FILE *out, const json_t *doc)
{
    const json_t *entries = json_object_get(doc, "entries");
    fprintf(out, "Memory of %s\n", str(doc, "root", "?"));
    if (!json_is_true(json_object_get(doc, "exists")))
        fprintf(out, "  no %s: extraction stays off here until you create it\n",
               str(doc, "memory_dir", ".loom/memory"));
    size_t i, k;
    const json_t *e, *line, *it;
    if (!json_array_size(entries))
        fprintf(out, "  no entries\n");
    json_array_foreach(entries, i, e) {
        const json_t *age = json_object_get(e, "age_days");
        fprintf(out, "  %-32s %-9s %s · %lld day%s old\n    %s\n", base(str(e, "path", "?")),
               str(e, "type", str(e, "kind", "")), str(e, "updated", "undated"),
               (long long)json_integer_value(age), json_integer_value(age) == 1 ? "" : "s",
               str(e, "description", ""));
    }
    const json_t *skipped = json_object_get(doc, "skipped");
    if (json_array_size(skipped))
        fprintf(out, "Not entries\n");
    json_array_foreach(skipped, i, e)
        fprintf(out, "  %s\n", json_string_value(e));
    const json_t *recalls = json_object_get(doc, "recalls");
    fprintf(out, "Recent recalls (.loom/mf/recall.jsonl)\n");
    if (!json_array_size(recalls))
        fprintf(out, "  none\n");
    json_array_foreach(recalls, i, line) {
        fprintf(out, "  %s · session %s\n", str(line, "ts", "?"), str(line, "session", "?"));
        json_array_foreach(json_object_get(line, "items"), k, it)
            fprintf(out, "    %-30s %s · score %.1f · %s\n", base(str(it, "path", "?")),
                   str(it, "kind", "memory"), json_number_value(json_object_get(it, "score")),
                   str(it, "why", ""));
    }
}

int memory_cmd_main(int argc, char **argv)
{
    bool as_json = false;
    const char *cwd = NULL;
    int recalls = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            as_json = true;
        else if (!strcmp(argv[i], "--cwd") && i + 1 < argc)
            cwd = argv[++i];
        else if (!strcmp(argv[i], "--recalls") && i + 1 < argc)
            recalls = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: loom memory [--json] [--cwd DIR] [--recalls N]\n");
            return 2;
        }
    }
    loom_status st;
    char *text = loom_memory_json(cwd, recalls, &st);
    if (!text) {
        fprintf(stderr, "loom memory: %s\n", st.message);
        return 1;
    }
    if (as_json) {
        puts(text);
        free(text);
        return 0;
    }
    json_t *doc = json_loads(text, 0, NULL);
    free(text);
    /* Names, descriptions and file names are the repository's text:
     * shown in visible form, no escape sequence reaches the terminal. */
    FILE *out = termsafe_fopen(stdout);
    if (!out) {
        json_decref(doc);
        fprintf(stderr, "loom memory: out of memory\n");
        return 1;
    }
    print_doc(out, doc);
    json_decref(doc);
    fclose(out);
    return 0;
}
