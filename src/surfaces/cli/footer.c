/* footer.c — the footer under the prompt: its text, what it shows and its
 * drawing (footer.h). footer_text is pure; the rest runs on the REPL's
 * main thread, between runs. */
#include "surfaces/cli/footer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "base/termsafe.h"
#include "surfaces/cli/spinner.h"
#include "surfaces/cli/statusline.h"
#include "surfaces/cli/term_out.h"

#define SEP " \xc2\xb7 " /* " · " */

const char *footer_mode_badge(const char *mode)
{
    if (!mode || !strcmp(mode, "default"))
        return "\xe2\x97\xa6 default";                     /* ◦ */
    if (!strcmp(mode, "plan"))
        return "\xe2\x8f\xb8 plan";                        /* ⏸ */
    if (!strcmp(mode, "acceptEdits"))
        return "\xe2\x8f\xb5\xe2\x8f\xb5 acceptEdits";     /* ⏵⏵ */
    if (!strcmp(mode, "bypassPermissions"))
        return "\xe2\x9a\xa0 bypassPermissions";           /* ⚠ */
    if (!strcmp(mode, "fullAccess"))
        return "\xe2\x9a\xa0 fullAccess";
    if (!strcmp(mode, "auto"))
        return "\xe2\x97\xa6 auto";
    if (!strcmp(mode, "dontAsk"))
        return "\xe2\x97\xa6 dontAsk";
    return "\xe2\x97\xa6 delegate";
}

static term_tone mode_tone(const char *mode)
{
    if (!mode || !strcmp(mode, "default"))
        return TONE_DIM;
    if (!strcmp(mode, "plan"))
        return TONE_YELLOW;
    if (!strcmp(mode, "acceptEdits"))
        return TONE_GREEN;
    if (!strcmp(mode, "bypassPermissions") || !strcmp(mode, "fullAccess"))
        return TONE_ALERT;
    return TONE_BOLD;
}

void footer_format_context(long long tokens, long long window, char *buf, unsigned size)
{
    char win[32];
    spinner_format_count(window, win, sizeof win);
    /* "200.0k" reads better as "200k". */
    size_t n = strlen(win);
    if (n > 3 && !strcmp(win + n - 3, ".0k"))
        memmove(win + n - 3, "k", 2);
    else if (n > 3 && !strcmp(win + n - 3, ".0M"))
        memmove(win + n - 3, "M", 2);
    long long pct = window > 0 ? (tokens * 100 + window / 2) / window : 0;
    snprintf(buf, size, "%lld%% of %s", pct, win);
}

/* Columns of UTF-8 text: one per character. */
static int width_of(const char *s)
{
    int w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80)
            w++;
    return w;
}

/* Appends s cut to max columns. */
static void put_cut(loom_str *out, const char *s, int max)
{
    int w = 0;
    for (const char *p = s; *p; p++) {
        if (((unsigned char)*p & 0xc0) != 0x80 && w++ >= max)
            break;
        str_putc(out, *p);
    }
}

char *footer_text(const footer_info *in, bool color, int cols)
{
    term_out t = {.color = color};
    const char *badge = footer_mode_badge(in->mode);
    bool plain_mode = !in->mode || !strcmp(in->mode, "default");
    /* The parts after the badge, most important first. */
    char *parts[4] = {NULL, NULL, NULL, NULL};
    size_t np = 0;
    if (in->custom) {
        parts[np++] = xstrdup(in->custom);
    } else {
        if (in->model && *in->model)
            parts[np++] = termsafe_dup(in->model);
        if (in->ctx_tokens >= 0 && in->ctx_window > 0) {
            char ctx[64], buf[80];
            footer_format_context(in->ctx_tokens, in->ctx_window, ctx, sizeof ctx);
            snprintf(buf, sizeof buf, "ctx %s", ctx);
            parts[np++] = xstrdup(buf);
        }
        if (in->agents_running > 0) {
            char buf[64];
            snprintf(buf, sizeof buf, "%d agent%s running", in->agents_running,
                     in->agents_running == 1 ? "" : "s");
            parts[np++] = xstrdup(buf);
        }
    }
    loom_str out = LOOM_STR_INIT;
    int avail = cols - 1; /* never the last column: no pending wrap */
    if (in->custom && plain_mode) {
        /* The command's line as it is (already cut and cleaned). */
        str_puts(&out, in->custom);
    } else {
        str_puts(&out, "  ");
        int w = 2 + width_of(badge);
        loom_str b = LOOM_STR_INIT;
        put_cut(&b, badge, avail - 2);
        term_put_tone(&t, &out, mode_tone(in->mode), b.ptr, b.len);
        str_free(&b);
        loom_str rest = LOOM_STR_INIT;
        for (size_t i = 0; i < np; i++) {
            int need = 3 + width_of(parts[i]);
            if (in->custom) { /* already cut to the width: cut again after the badge */
                str_puts(&rest, SEP);
                w += 3;
                if (w < avail)
                    put_cut(&rest, parts[i], avail - w);
                break;
            }
            if (w + need > avail)
                break;
            str_puts(&rest, SEP);
            str_puts(&rest, parts[i]);
            w += need;
        }
        if (rest.len) {
            if (in->custom) {
                str_append(&out, rest.ptr, rest.len);
                if (color) /* a cut may have left the command's colour on */
                    str_puts(&out, "\x1b[0m");
            }
            else
                term_put_tone(&t, &out, TONE_DIM, rest.ptr, rest.len);
        }
        str_free(&rest);
    }
    for (size_t i = 0; i < np; i++)
        free(parts[i]);
    str_puts(&out, "");
    return str_steal(&out);
}

void footer_show(const char *line)
{
    if (!line)
        return;
    /* Clear what a previous footer left, draw the new one on the next line,
     * come back to the start of this one for the prompt. */
    printf("\r\x1b[J\n%s\r\x1b[A", line);
    fflush(stdout);
}

void footer_redraw(const char *line)
{
    if (!line)
        return;
    printf("\x1b" "7\x1b[B\r\x1b[2K%s\x1b" "8", line);
    fflush(stdout);
}

void footer_clear(void)
{
    fputs("\r\x1b[J", stdout);
    fflush(stdout);
}

void footer_setup(footer *f, loom_agent *agent)
{
    free(f->status_cmd);
    char *setting = loom_agent_status_line_json(agent);
    f->status_cmd = statusline_command(setting, &f->status_padding);
    free(setting);
    f->stale = true;
}

static json_t *parse(char *text, const char *what)
{
    loom_error ignore;
    json_t *doc = text ? json_parse(text, strlen(text), what, &ignore) : NULL;
    free(text);
    return doc;
}

/* The active output style's name (caller frees), for the statusLine. */
static char *active_style(loom_agent *agent)
{
    json_t *doc = parse(loom_agent_extensions_json(agent), "extensions");
    const json_t *styles = json_object_get(doc, "output_styles");
    char *style = NULL;
    for (size_t i = 0; !style && i < json_array_size(styles); i++)
        if (json_is_true(json_object_get(json_array_get(styles, i), "active")))
            style = xstrdup(json_get_str(json_array_get(styles, i), "name", "default"));
    json_decref(doc);
    return style;
}

void footer_refresh(footer *f, loom_agent *agent, loom_session *session, const char *cwd,
                    double cost_usd)
{
    f->stale = false;
    json_t *doc = parse(loom_session_context_json(session), "context");
    f->ctx_tokens = doc ? json_get_int(doc, "tokens", -1) : -1;
    f->ctx_window = doc ? json_get_int(doc, "window", 0) : 0;
    json_decref(doc);
    loom_status st;
    doc = parse(loom_session_agents_json(session, &st), "agents");
    f->agents_running = 0;
    for (size_t i = 0; i < json_array_size(doc); i++) {
        const json_t *a = json_array_get(doc, i);
        if (json_is_true(json_object_get(a, "background")) &&
            !strcmp(json_get_str(a, "state", ""), "running"))
            f->agents_running++;
    }
    json_decref(doc);
    free(f->status_text);
    f->status_text = NULL;
    if (!f->status_cmd)
        return;
    char *style = active_style(agent);
    statusline_info in = {
        .session_id = loom_session_id(session), .transcript_path = loom_session_path(session),
        .cwd = cwd, .project_dir = cwd, .model = loom_agent_model(agent),
        .version = loom_version(), .output_style = style, .cost_usd = cost_usd,
        .context_tokens = f->ctx_tokens, .context_window = f->ctx_window,
    };
    char *input = statusline_input_json(&in);
    f->status_text = statusline_run(f->status_cmd, cwd, input, term_columns() - 1, f->color,
                                    f->status_padding);
    if (f->status_text && !*f->status_text) {
        free(f->status_text);
        f->status_text = NULL; /* nothing printed: the built-in footer */
    }
    free(input);
    free(style);
}

char *footer_line(const footer *f, loom_agent *agent, loom_session *session)
{
    footer_info in = {
        .mode = loom_session_permission_mode(session), .model = loom_agent_model(agent),
        .ctx_tokens = f->ctx_tokens, .ctx_window = f->ctx_window,
        .agents_running = f->agents_running, .custom = f->status_text,
    };
    return footer_text(&in, f->color, term_columns());
}

void footer_free(footer *f)
{
    free(f->status_cmd);
    free(f->status_text);
    f->status_cmd = f->status_text = NULL;
}
