/* slash_style.c — /output-style (slash_style.h). The list comes from
 * loom_agent_extensions_json's "output_styles"; a switch is a setting
 * (loom_agent_set_local_setting) and a reopened agent, so the style is the
 * workspace's from then on, in this REPL and the next one, as in Claude
 * Code. Text from style files is printed through term_printf
 * (terminal-safe). Main thread only. */
#include "surfaces/cli/slash_style.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json.h"
#include "base/str.h"

static json_t *styles_of(slash_host *r)
{
    char *text = loom_agent_extensions_json(r->agent);
    loom_error ignore;
    json_t *doc = text ? json_parse(text, strlen(text), "extensions", &ignore) : NULL;
    free(text);
    json_t *styles = json_incref(json_get_arr(doc, "output_styles"));
    json_decref(doc);
    return styles;
}

static const json_t *find_style(const json_t *styles, const char *name)
{
    size_t i;
    json_t *s;
    json_array_foreach(styles, i, s) {
        if (!strcasecmp(json_get_str(s, "name", ""), name))
            return s;
    }
    return NULL;
}

static void list_styles(slash_host *r, const json_t *styles)
{
    const char *active = "default";
    size_t i;
    json_t *s;
    json_array_foreach(styles, i, s) {
        if (json_get_bool(s, "active", false))
            active = json_get_str(s, "name", active);
    }
    term_printf(&r->out, TONE_PLAIN, "Output style: ");
    term_printf(&r->out, TONE_BOLD, "%s\n", active);
    int room = term_columns() - 24;
    json_array_foreach(styles, i, s) {
        bool on = json_get_bool(s, "active", false);
        const char *name = json_get_str(s, "name", "?");
        const char *source = json_get_str(s, "source", "");
        term_printf(&r->out, on ? TONE_BOLD : TONE_PLAIN, "%s %-20s",
                    on ? "\xe2\x97\x8f" : " ", name);
        const char *desc = json_get_str(s, "description", "");
        loom_str cut = LOOM_STR_INIT;
        term_put_clipped(&cut, desc, strlen(desc), room < 20 ? 20 : room);
        term_printf(&r->out, TONE_DIM, "%s%s\n", strlen(name) > 20 ? " " : "", str_cstr(&cut));
        if (strcmp(source, "built-in") != 0)
            term_printf(&r->out, TONE_DIM, "                       %s\n", source);
        str_free(&cut);
    }
    term_printf(&r->out, TONE_DIM, "/output-style NAME switches, from the next message on "
                "(kept in .loom/settings.local.json)\n");
}

void slash_output_style(slash_host *r, const char *args)
{
    json_t *styles = styles_of(r);
    if (!*args) {
        if (!json_array_size(styles))
            term_printf(&r->out, TONE_YELLOW, "The output styles could not be read.\n");
        else
            list_styles(r, styles);
        json_decref(styles);
        return;
    }
    const json_t *style = find_style(styles, args);
    if (!style && json_array_size(styles)) {
        term_printf(&r->out, TONE_YELLOW, "No output style \"%s\" \xc2\xb7 /output-style lists them\n",
                    args);
        json_decref(styles);
        return;
    }
    /* The style's own spelling, as listed. */
    json_t *value = json_string(style ? json_get_str(style, "name", args) : args);
    json_decref(styles);
    char *text = json_dumps(value, JSON_ENCODE_ANY);
    json_decref(value);
    loom_status st;
    int rc = loom_agent_set_local_setting(r->agent, "outputStyle", text, &st);
    free(text);
    if (rc != 0 || r->ops->reopen(r, NULL, &st) != 0) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
        return;
    }
    /* Read back from the new agent: what its requests will use. */
    styles = styles_of(r);
    const char *now = NULL;
    size_t i;
    json_t *s;
    json_array_foreach(styles, i, s) {
        if (json_get_bool(s, "active", false))
            now = json_get_str(s, "name", NULL);
    }
    term_printf(&r->out, TONE_PLAIN, "Output style: ");
    term_printf(&r->out, TONE_BOLD, "%s", now ? now : args);
    term_printf(&r->out, TONE_DIM, " \xc2\xb7 from the next message \xc2\xb7 saved in "
                ".loom/settings.local.json\n");
    json_decref(styles);
}
