/* tool_view.c — see tool_view.h. Everything a tool, a file or the model
 * wrote passes term_put_clipped before it is shown or kept for /expand:
 * only this file's own tones reach the terminal. Main thread only. */
#include "surfaces/cli/tool_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/cli/diff_view.h"
#include "surfaces/cli/fold.h"
#include "surfaces/cli/render.h"

#define LEAD "  \xe2\x8e\xbf  " /* "  ⎿  " */
#define PAD "     "

void tool_view_init(tool_view *tv, term_out *out, const char *cwd)
{
    memset(tv, 0, sizeof *tv);
    tv->out = out;
    tv->cwd = cwd;
}

void tool_view_free(tool_view *tv)
{
    for (size_t i = 0; i < tv->n_calls; i++) {
        free(tv->calls[i].id);
        free(tv->calls[i].tool);
        free(tv->calls[i].header);
        json_decref(tv->calls[i].input);
        str_free(&tv->calls[i].live);
    }
    free(tv->calls);
    memset(tv, 0, sizeof *tv);
}

static tool_call_view *find_call(tool_view *tv, const char *id)
{
    for (size_t i = tv->n_calls; i-- > 0;)
        if (!strcmp(tv->calls[i].id, id))
            return &tv->calls[i];
    return NULL;
}

static const char *field(const json_t *input, const char *key)
{
    const char *s = json_get_str(input, key, NULL);
    return s && *s ? s : NULL;
}

static const char *relative(const tool_view *tv, const char *s)
{
    /* Paths inside the working directory read better relative. */
    size_t n = tv->cwd ? strlen(tv->cwd) : 0;
    if (n && !strncmp(s, tv->cwd, n) && s[n] == '/' && s[n + 1])
        return s + n + 1;
    return s;
}

/* The most telling input of a call, as the user would recognise it. */
static char *call_argument(const tool_view *tv, const char *tool, const json_t *input)
{
    const char *s = NULL;
    if (!strcmp(tool, "Bash"))
        s = field(input, "command");
    else if (!strcmp(tool, "Read") || !strcmp(tool, "Write") || !strcmp(tool, "Edit") ||
             !strcmp(tool, "MultiEdit") || !strcmp(tool, "NotebookEdit"))
        s = field(input, "file_path") ? field(input, "file_path") : field(input, "notebook_path");
    else if (!strcmp(tool, "Glob") || !strcmp(tool, "Grep"))
        s = field(input, "pattern");
    else if (!strcmp(tool, "WebFetch"))
        s = field(input, "url");
    else if (!strcmp(tool, "WebSearch"))
        s = field(input, "query");
    else if (!strcmp(tool, "TaskOutput") || !strcmp(tool, "TaskStop"))
        s = field(input, "task_id");
    else if (!strcmp(tool, "Task") || !strcmp(tool, "Agent"))
        s = field(input, "description");
    if (!strcmp(tool, "TodoWrite")) {
        loom_str t = LOOM_STR_INIT;
        size_t n = json_array_size(json_get_arr(input, "todos"));
        str_printf(&t, "%zu item%s", n, n == 1 ? "" : "s");
        return str_steal(&t);
    }
    if (!strcmp(tool, "AskUserQuestion")) {
        const json_t *q = json_array_get(json_get_arr(input, "questions"), 0);
        s = field(q, "question");
    }
    if (!s && json_is_object(input)) {
        const char *k;
        json_t *val;
        json_object_foreach((json_t *)input, k, val) {
            if (json_is_string(val) && *json_string_value(val)) {
                s = json_string_value(val);
                break;
            }
        }
    }
    return xstrdup(s ? relative(tv, s) : "");
}

static void print_header(tool_view *tv, const char *header, bool failed)
{
    loom_str out = LOOM_STR_INIT;
    str_putc(&out, '\n'); /* a blank line before each block */
    term_put_tone(tv->out, &out, failed ? TONE_RED : TONE_PLAIN, "\xe2\x97\x8f ", 4); /* ● */
    loom_str bold = LOOM_STR_INIT;
    term_put_clipped(&bold, header, strlen(header), term_columns() - 2);
    term_put_tone(tv->out, &out, TONE_BOLD, str_cstr(&bold), bold.len);
    str_putc(&out, '\n');
    term_write(tv->out, str_cstr(&out), out.len);
    str_free(&out);
    str_free(&bold);
}

void tool_view_started(tool_view *tv, const json_t *p)
{
    const char *tool = json_get_str(p, "tool", "?");
    const char *id = json_get_str(p, "call_id", "");
    const json_t *input = json_get_obj(p, "input");
    char *arg = call_argument(tv, tool, input);
    loom_str h = LOOM_STR_INIT;
    /* One line: a multi-line command shows its first line. */
    size_t first = strcspn(arg, "\n");
    str_printf(&h, "%s(%.*s%s)", tool, (int)first, arg, arg[first] ? " \xe2\x80\xa6" : "");
    free(arg);
    tv->calls = xrealloc(tv->calls, (tv->n_calls + 1) * sizeof *tv->calls);
    tool_call_view *c = &tv->calls[tv->n_calls++];
    memset(c, 0, sizeof *c);
    c->id = xstrdup(id);
    c->tool = xstrdup(tool);
    c->header = str_steal(&h);
    c->input = input ? json_deep_copy(input) : NULL;
    print_header(tv, c->header, false);
    tv->last_header = c->id;
    tv->tools_running++;
    char label[96];
    snprintf(label, sizeof label, "Running %s\xe2\x80\xa6", tool);
    spinner_label(tv->out->spin, label);
}

bool tool_view_progress(tool_view *tv, const json_t *p)
{
    const json_t *output = json_object_get(p, "output");
    if (json_is_string(output)) {
        tool_call_view *c = find_call(tv, json_get_str(p, "call_id", ""));
        if (!c)
            return false;
        size_t n = json_string_length(output);
        if (c->live.len + n > TOOL_VIEW_LIVE_KEEP)
            n = c->live.len < TOOL_VIEW_LIVE_KEEP ? TOOL_VIEW_LIVE_KEEP - c->live.len : 0;
        str_append(&c->live, json_string_value(output), n);
        tv->live_id = c->id;
        return true;
    }
    /* An MCP tool's progress: the spinner says how far it got. */
    char label[160];
    const char *msg = json_get_str(p, "message", NULL);
    double done = json_get_num(p, "progress", 0), total = json_get_num(p, "total", -1);
    if (total > 0)
        snprintf(label, sizeof label, "%s %.0f/%.0f%s%.80s", json_get_str(p, "tool", ""), done,
                 total, msg ? " \xc2\xb7 " : "", msg ? msg : "");
    else
        snprintf(label, sizeof label, "%s %.0f%s%.80s", json_get_str(p, "tool", ""), done,
                 msg ? " \xc2\xb7 " : "", msg ? msg : "");
    spinner_label(tv->out->spin, label);
    return false;
}

void tool_view_tail(const char *text, size_t len, size_t n, const char *indent, int cols,
                    loom_str *out)
{
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
        len--;
    size_t start = len, seen = 0;
    while (start > 0 && seen < n) {
        start--;
        if (text[start] == '\n' && ++seen == n) {
            start++;
            break;
        }
    }
    const char *s = text + start, *end = text + len;
    bool first = true;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t k = nl ? (size_t)(nl - s) : (size_t)(end - s);
        /* A progress bar redraws its line with CR: its last state shows. */
        const char *cr = k ? memchr(s, '\r', k) : NULL;
        const char *from = s;
        while (cr && cr + 1 < s + k) {
            from = cr + 1;
            cr = memchr(from, '\r', (size_t)(s + k - from));
        }
        size_t m = (size_t)(s + k - from);
        if (m && from[m - 1] == '\r')
            m--;
        if (!first)
            str_putc(out, '\n');
        str_puts(out, indent);
        term_put_clipped(out, from, m, cols - (int)render_display_width(indent, strlen(indent)));
        first = false;
        s = nl ? nl + 1 : end;
    }
}

void tool_view_live_lines(const tool_view *tv, int cols, loom_str *lines)
{
    if (!tv->live_id)
        return;
    for (size_t i = tv->n_calls; i-- > 0;) {
        const tool_call_view *c = &tv->calls[i];
        if (strcmp(c->id, tv->live_id) != 0)
            continue;
        if (!c->live.len)
            return;
        loom_str tail = LOOM_STR_INIT;
        tool_view_tail(c->live.ptr, c->live.len, TOOL_VIEW_LIVE_LINES, PAD, cols, &tail);
        /* Dim, line by line: no style crosses a line the spinner redraws. */
        for (const char *s = tail.ptr, *end = tail.ptr + tail.len; s < end;) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t k = nl ? (size_t)(nl - s) : (size_t)(end - s);
            if (lines->len)
                str_putc(lines, '\n');
            term_put_tone(tv->out, lines, TONE_DIM, s, k);
            s = nl ? nl + 1 : end;
        }
        str_free(&tail);
        return;
    }
}

/* Every line of text, terminal-safe, for /expand. */
static void safe_lines(const char *text, size_t len, const char *indent, loom_str *out)
{
    const char *s = text, *end = text + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t k = nl ? (size_t)(nl - s) : (size_t)(end - s);
        str_puts(out, indent);
        term_put_clipped(out, s, k, 0);
        str_putc(out, '\n');
        s = nl ? nl + 1 : end;
    }
}

static size_t count_lines(const char *s, size_t len)
{
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += s[i] == '\n';
    return lines + (len > 0 && s[len - 1] != '\n');
}

void tool_view_todos(const term_out *t, loom_str *out, const json_t *todos, const char *indent,
                     int cols)
{
    size_t i;
    json_t *todo;
    loom_str line = LOOM_STR_INIT;
    json_array_foreach(todos, i, todo) {
        const char *status = json_get_str(todo, "status", "pending");
        const char *content = json_get_str(todo, "content", "");
        bool done = !strcmp(status, "completed");
        bool doing = !strcmp(status, "in_progress");
        str_puts(out, i == 0 ? indent : PAD);
        const char *mark = done ? "\xe2\x9c\x93 " : doing ? "\xe2\x97\xbc " : "\xe2\x98\x90 "; /* ✓ ◼ ☐ */
        term_put_tone(t, out, done ? TONE_GREEN : TONE_PLAIN, mark, strlen(mark));
        str_clear(&line);
        term_put_clipped(&line, content, strlen(content), cols - 7);
        if (done && t->color) {
            /* Struck through (SGR 9) and dim: done, still on the list. */
            str_puts(out, "\x1b[2;9m");
            str_append(out, line.ptr, line.len);
            str_puts(out, "\x1b[0m");
        } else {
            term_put_tone(t, out, doing ? TONE_BOLD : TONE_PLAIN, line.ptr, line.len);
        }
        str_putc(out, '\n');
    }
    str_free(&line);
}

/* An Edit's or Write's result: what changed, and the diff. */
static void file_result(tool_view *tv, const tool_call_view *c, const json_t *p, loom_str *out)
{
    const json_t *raw = json_get_obj(p, "raw");
    const json_t *patch = json_get_arr(raw, "structuredPatch");
    const char *file = json_get_str(raw, "filePath", json_get_str(c ? c->input : NULL, "file_path", ""));
    const char *path = relative(tv, file);
    bool created = !strcmp(json_get_str(raw, "type", ""), "create");
    long added = 0, removed = 0;
    diff_view_counts(patch, &added, &removed);
    loom_str msg = LOOM_STR_INIT, line = LOOM_STR_INIT;
    if (!patch) {
        /* "The file … has been updated." — the snippet after it is for the model. */
        const char *o = json_get_str(p, "output", "");
        size_t n = strcspn(o, "\n");
        const char *here = strstr(o, " Here is the result");
        if (here && (size_t)(here - o) < n)
            n = (size_t)(here - o);
        str_append(&msg, o, n);
    } else if (created) {
        str_printf(&msg, "Wrote %ld line%s to %s", added, added == 1 ? "" : "s", path);
    } else {
        str_printf(&msg, "Updated %s with %ld addition%s and %ld removal%s", path, added,
                   added == 1 ? "" : "s", removed, removed == 1 ? "" : "s");
    }
    term_put_clipped(&line, msg.ptr, msg.len, term_columns() - 5);
    str_puts(out, LEAD);
    term_put_tone(tv->out, out, TONE_DIM, line.ptr, line.len);
    str_putc(out, '\n');
    if (patch && json_array_size(patch)) {
        size_t hidden = 0;
        diff_view_render(tv->out, out, patch, PAD " ", term_columns(), TOOL_VIEW_DIFF_LINES, &hidden);
        if (hidden) {
            loom_str whole = LOOM_STR_INIT;
            diff_view_render(tv->out, &whole, patch, PAD " ", term_columns(), 0, NULL);
            fold_push(c ? c->header : json_get_str(p, "tool", ""), whole.ptr, whole.len);
            str_free(&whole);
            fold_line(tv->out, out, hidden, NULL);
        }
    }
    str_free(&msg);
    str_free(&line);
}

void tool_view_done(tool_view *tv, const json_t *p)
{
    const char *id = json_get_str(p, "call_id", "");
    const char *tool = json_get_str(p, "tool", "?");
    bool error = json_get_bool(p, "is_error", false);
    const char *output = json_get_str(p, "output", "");
    long long total = json_get_int(p, "output_chars", 0);
    size_t len = strlen(output);
    bool cut = total > (long long)len;
    tool_call_view *c = find_call(tv, id);
    /* Results of parallel calls can come after another call's header. */
    if (c && (!tv->last_header || strcmp(tv->last_header, id) != 0))
        print_header(tv, c->header, error);
    tv->last_header = NULL;
    if (tv->live_id && c && tv->live_id == c->id)
        tv->live_id = NULL;
    while (len && (output[len - 1] == '\n' || output[len - 1] == '\r'))
        len--;
    size_t lines = count_lines(output, len);

    int cols = term_columns() - 5;
    loom_str out = LOOM_STR_INIT;
    term_tone tone = error ? TONE_RED : TONE_PLAIN;
    bool file_tool = !strcmp(tool, "Edit") || !strcmp(tool, "Write") || !strcmp(tool, "MultiEdit");
    if (!len) {
        str_puts(&out, LEAD);
        term_put_tone(tv->out, &out, error ? TONE_RED : TONE_DIM,
                      error ? "(failed, no message)" : "(no output)", error ? 20 : 11);
        str_putc(&out, '\n');
    } else if (file_tool && !error) {
        file_result(tv, c, p, &out);
    } else if (!strcmp(tool, "TodoWrite") && !error && c &&
               json_array_size(json_get_arr(c->input, "todos"))) {
        tool_view_todos(tv->out, &out, json_get_arr(c->input, "todos"), LEAD, term_columns());
    } else if (!strcmp(tool, "Read") && !error) {
        char msg[64];
        snprintf(msg, sizeof msg, "Read %zu%s line%s", lines, cut ? "+" : "", lines == 1 && !cut ? "" : "s");
        str_puts(&out, LEAD);
        term_put_tone(tv->out, &out, TONE_DIM, msg, strlen(msg));
        str_putc(&out, '\n');
    } else {
        const char *s = output;
        const char *end = output + len;
        for (size_t i = 0; i < TOOL_VIEW_RESULT_LINES && s < end; i++) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
            loom_str line = LOOM_STR_INIT;
            term_put_clipped(&line, s, n, cols);
            str_puts(&out, i == 0 ? LEAD : PAD);
            term_put_tone(tv->out, &out, tone, str_cstr(&line), line.len);
            str_putc(&out, '\n');
            str_free(&line);
            s = nl ? nl + 1 : end;
        }
        /* What the command printed live is its whole output (the event
         * carries a preview): that is what /expand shows when longer. */
        const char *whole = output;
        size_t whole_len = len;
        size_t whole_lines = lines;
        if (c && c->live.len > len) {
            whole = c->live.ptr;
            whole_len = c->live.len;
            whole_lines = count_lines(whole, whole_len);
        }
        if (whole_lines > TOOL_VIEW_RESULT_LINES || cut) {
            loom_str body = LOOM_STR_INIT;
            safe_lines(whole, whole_len, PAD, &body);
            bool partial = cut && whole == output;
            if (partial)
                str_printf(&body, PAD "\xe2\x80\xa6 (the first %zu of %lld characters; the whole "
                           "result is in the session)\n", len, total);
            fold_push(c ? c->header : tool, body.ptr, body.len);
            str_free(&body);
            char more[64] = "";
            if (partial)
                snprintf(more, sizeof more, "(%lld characters in all)", total);
            fold_line(tv->out, &out, whole_lines > TOOL_VIEW_RESULT_LINES
                                         ? whole_lines - TOOL_VIEW_RESULT_LINES : 0,
                      *more ? more : NULL);
        }
    }
    term_write(tv->out, str_cstr(&out), out.len);
    str_free(&out);
    if (--tv->tools_running <= 0) {
        tv->tools_running = 0;
        spinner_label(tv->out->spin, "Thinking\xe2\x80\xa6");
    }
}

/* Lines of a command shown in an approval before "… +N lines": enough to
 * judge a script, not so many that the question scrolls away. */
#define APPROVAL_LINES 12
#define APPROVAL_PLAN_LINES 40

void tool_view_approval_subject(tool_view *tv, loom_str *out, const char *tool,
                                const json_t *input)
{
    int cols = term_columns() - 4;
    /* A command, or the plan ExitPlanMode asks to be approved: its lines
     * themselves (a plan more of them), not a one-line summary. */
    bool plan = !strcmp(tool, "ExitPlanMode");
    const char *cmd = !strcmp(tool, "Bash") ? field(input, "command")
                      : plan               ? field(input, "plan")
                                           : NULL;
    size_t cap = plan ? APPROVAL_PLAN_LINES : APPROVAL_LINES;
    if (!cmd) {
        char *arg = call_argument(tv, tool, input);
        if (*arg) {
            loom_str line = LOOM_STR_INIT;
            term_put_clipped(&line, arg, strlen(arg), cols);
            str_puts(out, "    ");
            term_put_tone(tv->out, out, TONE_BOLD, str_cstr(&line), line.len);
            str_putc(out, '\n');
            str_free(&line);
        }
        free(arg);
        /* An edit: the change itself, as it would be made now. */
        bool in_file = true;
        json_t *patch = diff_view_patch_for(tool, input, tv->cwd, &in_file);
        if (patch && !in_file) {
            static const char note[] = "    (the text to replace is not in the file as it is "
                                       "now: the lines are numbered from the change's start)";
            term_put_tone(tv->out, out, TONE_DIM, note, sizeof note - 1);
            str_putc(out, '\n');
        }
        if (patch) {
            size_t hidden = 0;
            diff_view_render(tv->out, out, patch, "    ", term_columns(),
                             TOOL_VIEW_APPROVAL_DIFF_LINES, &hidden);
            if (hidden) {
                loom_str whole = LOOM_STR_INIT;
                diff_view_render(tv->out, &whole, patch, "    ", term_columns(), 0, NULL);
                loom_str title = LOOM_STR_INIT;
                str_printf(&title, "%s(%s) \xc2\xb7 the change asked for", tool,
                           relative(tv, json_get_str(input, "file_path", "")));
                fold_push(title.ptr, whole.ptr, whole.len);
                str_free(&title);
                str_free(&whole);
                fold_line(tv->out, out, hidden, NULL);
            }
            json_decref(patch);
        }
        return;
    }
    const char *s = cmd;
    size_t shown = 0, total = 1;
    for (const char *p = cmd; *p; p++)
        total += *p == '\n' && p[1];
    while (*s && shown < cap) {
        size_t n = strcspn(s, "\n");
        loom_str line = LOOM_STR_INIT;
        term_put_clipped(&line, s, n, cols);
        str_puts(out, "    ");
        term_put_tone(tv->out, out, TONE_BOLD, str_cstr(&line), line.len);
        str_putc(out, '\n');
        str_free(&line);
        shown++;
        s += n + (s[n] == '\n');
    }
    if (total > shown) {
        char more[48];
        snprintf(more, sizeof more, "    \xe2\x80\xa6 +%zu lines\n", total - shown);
        term_put_tone(tv->out, out, TONE_DIM, more, strlen(more));
    }
}
