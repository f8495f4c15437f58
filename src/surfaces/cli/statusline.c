/* statusline.c — the statusLine command: its input JSON, running it with a
 * time limit, and its first line cleaned for the footer (statusline.h).
 * No state; any thread. */
#include "surfaces/cli/statusline.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/proc.h"
#include "base/str.h"

#define STATUSLINE_CAP (64 * 1024)

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

char *statusline_input_json(const statusline_info *in)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "hook_event_name", json_string("Status"));
    json_object_set_new(doc, "session_id", str_or_null(in->session_id));
    json_object_set_new(doc, "transcript_path", str_or_null(in->transcript_path));
    json_object_set_new(doc, "cwd", str_or_null(in->cwd));
    json_t *model = json_object();
    json_object_set_new(model, "id", str_or_null(in->model));
    json_object_set_new(model, "display_name", str_or_null(in->model));
    json_object_set_new(doc, "model", model);
    json_t *ws = json_object();
    json_object_set_new(ws, "current_dir", str_or_null(in->cwd));
    json_object_set_new(ws, "project_dir", str_or_null(in->project_dir ? in->project_dir : in->cwd));
    json_object_set_new(doc, "workspace", ws);
    json_object_set_new(doc, "version", str_or_null(in->version));
    json_t *style = json_object();
    json_object_set_new(style, "name", json_string(in->output_style ? in->output_style : "default"));
    json_object_set_new(doc, "output_style", style);
    json_t *cost = json_object();
    json_object_set_new(cost, "total_cost_usd", in->cost_usd >= 0 ? json_real(in->cost_usd) : json_null());
    json_object_set_new(doc, "cost", cost);
    json_t *cw = json_object();
    if (in->context_window > 0)
        json_object_set_new(cw, "context_window_size", json_integer(in->context_window));
    if (in->context_tokens >= 0) {
        json_object_set_new(cw, "total_input_tokens", json_integer(in->context_tokens));
        if (in->context_window > 0)
            json_object_set_new(cw, "used_percentage",
                                json_real(100.0 * (double)in->context_tokens / (double)in->context_window));
    }
    json_object_set_new(doc, "context_window", cw);
    json_object_set_new(doc, "exceeds_200k_tokens", json_boolean(in->context_tokens > 200000));
    char *text = json_dump_compact(doc);
    json_decref(doc);
    return text;
}

char *statusline_command(const char *setting_json, int *padding)
{
    *padding = 0;
    if (!setting_json)
        return NULL;
    loom_error ignore;
    json_t *doc = json_parse(setting_json, strlen(setting_json), "statusLine", &ignore);
    const char *type = json_get_str(doc, "type", "command");
    const char *cmd = json_get_str(doc, "command", NULL);
    char *out = NULL;
    if (json_is_object(doc) && !strcmp(type, "command") && cmd && *cmd)
        out = xstrdup(cmd);
    long long pad = json_get_int(doc, "padding", 0);
    if (pad > 0 && pad <= 20)
        *padding = (int)pad;
    json_decref(doc);
    return out;
}

/* ESC [ parameters… m: a colour. Its length, or 0 when s is not one. */
static size_t sgr_length(const char *s)
{
    if (s[0] != '\x1b' || s[1] != '[')
        return 0;
    size_t i = 2;
    while ((s[i] >= '0' && s[i] <= '9') || s[i] == ';' || s[i] == ':')
        i++;
    return s[i] == 'm' ? i + 1 : 0;
}

/* Any other escape sequence: its length (at least 1: the ESC). */
static size_t escape_length(const char *s)
{
    size_t i = 1;
    if (s[1] == '[') {
        i = 2;
        while (s[i] && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x40)
            i++;
        return s[i] ? i + 1 : i;
    }
    if (s[1] == ']') { /* OSC: up to BEL or ESC \ */
        for (i = 2; s[i] && s[i] != '\a' && !(s[i] == '\x1b' && s[i + 1] == '\\'); i++)
            ;
        return s[i] == '\a' ? i + 1 : s[i] ? i + 2 : i;
    }
    return s[1] ? 2 : 1;
}

char *statusline_clean(const char *text, int cols, bool color, int padding)
{
    loom_str out = LOOM_STR_INIT;
    int width = 0;
    bool coloured = false;
    for (int i = 0; i < padding && width < cols; i++, width++)
        str_putc(&out, ' ');
    for (const char *p = text; *p && *p != '\n' && *p != '\r';) {
        unsigned char c = (unsigned char)*p;
        if (c == 0x1b) {
            size_t n = sgr_length(p);
            if (n && color) {
                str_append(&out, p, n);
                coloured = true;
            }
            p += n ? n : escape_length(p);
            continue;
        }
        if (c < 0x20 || c == 0x7f) {
            if (c == '\t' && width < cols) {
                str_putc(&out, ' ');
                width++;
            }
            p++;
            continue;
        }
        /* One character: a UTF-8 lead byte and its continuation bytes. */
        size_t n = 1;
        while (p[n] && ((unsigned char)p[n] & 0xc0) == 0x80)
            n++;
        if (width >= cols)
            break;
        str_append(&out, p, n);
        width++;
        p += n;
    }
    if (coloured)
        str_puts(&out, "\x1b[0m");
    str_puts(&out, "");
    return str_steal(&out);
}

char *statusline_run(const char *command, const char *cwd, const char *input, int cols,
                     bool color, int padding)
{
    const char *argv[] = {"/bin/sh", "-c", command, NULL};
    proc_spec spec = {.argv = argv, .cwd = cwd, .input = input, .input_len = strlen(input),
                      .timeout_ms = STATUSLINE_TIMEOUT_MS, .grace_ms = 200,
                      .capture_cap = STATUSLINE_CAP};
    proc_result res;
    memset(&res, 0, sizeof res);
    loom_error err;
    char *line = NULL;
    if (proc_run(&spec, &res, &err) == 0 && !res.timed_out && res.exit_code == 0 && res.out &&
        res.out_len && res.out[0] != '\n')
        line = statusline_clean(res.out, cols, color, padding);
    proc_result_free(&res);
    return line;
}
