/* elicit_form.c — elicitation forms at the terminal (see elicit_form.h). */
#include "surfaces/cli/elicit_form.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/termsafe.h"
#include "surfaces/cli/term_out.h"

/* Tries to read one field's answer as its schema's type. NULL: not valid. */
static json_t *parse_value(const json_t *prop, const char *line)
{
    const char *type = json_get_str(prop, "type", "string");
    const json_t *choices = json_object_get(prop, "enum");
    if (json_is_array(choices)) {
        char *end;
        long n = strtol(line, &end, 10);
        if (*line && !*end && n >= 1 && (size_t)n <= json_array_size(choices))
            return json_incref(json_array_get(choices, (size_t)n - 1));
        size_t i;
        json_t *c;
        json_array_foreach(choices, i, c)
            if (json_is_string(c) && !strcmp(json_string_value(c), line))
                return json_incref(c);
        return NULL;
    }
    if (!strcmp(type, "boolean")) {
        if (!strcmp(line, "y") || !strcmp(line, "yes") || !strcmp(line, "true"))
            return json_true();
        if (!strcmp(line, "n") || !strcmp(line, "no") || !strcmp(line, "false"))
            return json_false();
        return NULL;
    }
    if (!strcmp(type, "integer") || !strcmp(type, "number")) {
        char *end;
        double d = strtod(line, &end);
        if (!*line || *end)
            return NULL;
        if (!strcmp(type, "integer")) {
            if (d != (double)(long long)d)
                return NULL;
            return json_integer((json_int_t)d);
        }
        return json_real(d);
    }
    return json_string(line);
}

static void show_field(repl *r, const char *key, const json_t *prop, bool required)
{
    term_out *out = &r->host.out;
    char *title = termsafe_dup(json_get_str(prop, "title", key));
    char *desc = termsafe_dup(json_get_str(prop, "description", ""));
    term_printf(out, TONE_BOLD, "  %s%s", title, required ? " *" : "");
    term_printf(out, TONE_DIM, " (%s)%s%s\n", json_get_str(prop, "type", "string"),
                *desc ? " " : "", desc);
    const json_t *choices = json_object_get(prop, "enum");
    size_t i;
    json_t *c;
    json_array_foreach(choices, i, c) {
        char *v = json_dump_compact(c);
        term_printf(out, TONE_PLAIN, "    %zu. %s\n", i + 1, v ? v : "?");
        free(v);
    }
    const json_t *d = json_object_get(prop, "default");
    if (d) {
        char *v = json_dump_compact(d);
        term_printf(out, TONE_DIM, "    empty keeps the default: %s\n", v ? v : "?");
        free(v);
    }
    free(title);
    free(desc);
}

static char *action(const char *a)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "{\"action\":\"%s\"}", a);
    return str_steal(&s);
}

static char *url_mode(repl *r, const char *server, const json_t *req)
{
    char *url = termsafe_dup(json_get_str(req, "url", ""));
    term_printf(&r->host.out, TONE_PLAIN, "  Open this link to go on: ");
    term_printf(&r->host.out, TONE_BOLD, "%s\n", url);
    free(url);
    char *line = repl_ask_line(r, "  Done? [Y/n] ");
    (void)server;
    char *out = action(!line ? "cancel" : (line[0] == 'n' || line[0] == 'N') ? "decline"
                                                                             : "accept");
    free(line);
    return out;
}

char *elicit_person(repl *r, const char *server, const char *request_json)
{
    loom_error ignore;
    json_t *req = json_parse(request_json, strlen(request_json), "elicitation", &ignore);
    char *safe_server = termsafe_dup(server);
    char *msg = termsafe_dup(json_get_str(req, "message", ""));
    term_printf(&r->host.out, TONE_YELLOW, "? MCP server %s asks: ", safe_server);
    term_printf(&r->host.out, TONE_PLAIN, "%s\n", msg);
    free(safe_server);
    free(msg);
    char *out = NULL;
    if (!strcmp(json_get_str(req, "mode", "form"), "url")) {
        out = url_mode(r, server, req);
        json_decref(req);
        return out;
    }
    char *go = repl_ask_line(r, "  Answer it? [Y/n] ");
    if (!go || go[0] == 'n' || go[0] == 'N') {
        out = action(go ? "decline" : "cancel");
        free(go);
        json_decref(req);
        return out;
    }
    free(go);
    const json_t *schema = json_object_get(req, "requestedSchema");
    const json_t *props = json_object_get(schema, "properties");
    const json_t *required = json_object_get(schema, "required");
    json_t *content = json_object();
    const char *key;
    json_t *prop;
    bool cancelled = false;
    json_object_foreach((json_t *)props, key, prop) {
        bool req_field = false;
        size_t i;
        json_t *rk;
        json_array_foreach(required, i, rk)
            req_field |= json_is_string(rk) && !strcmp(json_string_value(rk), key);
        show_field(r, key, prop, req_field);
        for (int attempt = 0; attempt < 3; attempt++) {
            char *line = repl_ask_line(r, "  " REPL_PROMPT);
            if (!line) {
                cancelled = true;
                break;
            }
            if (!*line) {
                free(line);
                if (!req_field || json_object_get(prop, "default"))
                    break; /* the default (applied by the library) or nothing */
                term_printf(&r->host.out, TONE_YELLOW, "    this one is required\n");
                continue;
            }
            json_t *v = parse_value(prop, line);
            free(line);
            if (v) {
                json_object_set_new(content, key, v);
                break;
            }
            term_printf(&r->host.out, TONE_YELLOW, "    that is not a %s%s\n",
                        json_get_str(prop, "type", "string"),
                        json_object_get(prop, "enum") ? " from the list" : "");
        }
        if (cancelled)
            break;
    }
    if (cancelled) {
        out = action("cancel");
    } else {
        json_t *res = json_pack("{s:s,s:O}", "action", "accept", "content", content);
        out = json_dump_compact(res);
        json_decref(res);
    }
    json_decref(content);
    json_decref(req);
    return out;
}
