/* session_picker.c — the session list, its key loop and the recent turns
 * (session_picker.h). */
#include "surfaces/cli/session_picker.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/json.h"
#include "base/str.h"

/* An Esc not followed by the rest of a key's sequence within this long is
 * the Esc key itself (the usual terminal convention). */
#define ESC_WAIT_MS 50
/* What one shortened turn of the recent conversation may hold. */
#define RECENT_LINES 3

void picker_age(const char *iso, char *buf, size_t size)
{
    struct tm tm = {0};
    int y, mo, d, h, mi, s;
    if (!iso || sscanf(iso, "%d-%d-%dT%d:%d:%d", &y, &mo, &d, &h, &mi, &s) != 6) {
        snprintf(buf, size, "%s", "");
        return;
    }
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = s;
    long long ago = (long long)(time(NULL) - timegm(&tm));
    if (ago < 60)
        snprintf(buf, size, "just now");
    else if (ago < 3600)
        snprintf(buf, size, "%lld min ago", ago / 60);
    else if (ago < 86400)
        snprintf(buf, size, "%lld h ago", ago / 3600);
    else
        snprintf(buf, size, "%lld d ago", ago / 86400);
}

static json_t *parse_list(const char *sessions_json)
{
    loom_error ignore;
    json_t *arr = sessions_json ? json_parse(sessions_json, strlen(sessions_json), "sessions",
                                             &ignore)
                                : NULL;
    if (!json_is_array(arr)) {
        json_decref(arr);
        arr = json_array();
    }
    return arr;
}

/* One session: two lines, cut to the terminal's width so a redraw knows
 * how many lines it wrote. */
static void put_row(term_out *out, const json_t *o, size_t i, bool selected, bool current)
{
    int cols = term_columns();
    char when[32];
    picker_age(json_get_str(o, "modified", NULL), when, sizeof when);
    long long n = json_get_int(o, "messages", 0);
    char tail[96];
    snprintf(tail, sizeof tail, "  %s \xc2\xb7 %lld message%s%s", when, n, n == 1 ? "" : "s",
             current ? " (current)" : "");
    const char *title = json_get_str(o, "title", "(no prompt yet)");
    /* Nothing may wrap: a redraw counts the lines it wrote. On a narrow
     * terminal the age and count give way to the title, the id to the
     * prompt. */
    int room = cols - 6 - (int)strlen(tail);
    bool with_tail = room >= 10;
    if (!with_tail)
        room = cols - 7;
    loom_str line = LOOM_STR_INIT;
    term_put_clipped(&line, title, strlen(title), room < 1 ? 1 : room);
    term_printf(out, selected ? TONE_BOLD : TONE_PLAIN, "%s%2zu. %s", selected ? "\xe2\x9d\xaf " : "  ",
                i + 1, str_cstr(&line));
    term_printf(out, TONE_DIM, "%s\n", with_tail ? tail : "");
    str_free(&line);
    const char *id = json_get_str(o, "id", "");
    const char *first = json_get_str(o, "first_prompt", "");
    loom_str second = LOOM_STR_INIT;
    /* The whole id: ids made close in time share their first digits. */
    room = cols - 6 - (int)strlen(id) - 2;
    bool with_id = room >= 10;
    if (!with_id)
        room = cols - 7;
    term_put_clipped(&second, first, strlen(first), room < 1 ? 1 : room);
    term_printf(out, TONE_DIM, "      %.40s%s%s\n", with_id ? id : "", with_id ? "  " : "",
                str_cstr(&second));
    str_free(&second);
}

static int print_rows(term_out *out, const json_t *arr, const char *current_id, long selected)
{
    size_t n = json_array_size(arr);
    size_t shown = n < PICKER_ROWS ? n : PICKER_ROWS;
    for (size_t i = 0; i < shown; i++) {
        const json_t *o = json_array_get(arr, i);
        bool cur = current_id && !strcmp(json_get_str(o, "id", ""), current_id);
        put_row(out, o, i, (long)i == selected, cur);
    }
    if (n > shown)
        term_printf(out, TONE_DIM, "  \xe2\x80\xa6 %zu older (/resume N or an id opens any)\n",
                    n - shown);
    if (!n)
        term_printf(out, TONE_DIM, "  (none)\n");
    return (int)shown;
}

int picker_print(term_out *out, const char *sessions_json, const char *current_id)
{
    json_t *arr = parse_list(sessions_json);
    int n = print_rows(out, arr, current_id, -1);
    json_decref(arr);
    return n;
}

void picker_print_plain(FILE *f, const char *sessions_json)
{
    json_t *arr = parse_list(sessions_json);
    size_t k;
    json_t *o;
    json_array_foreach(arr, k, o) {
        char when[32];
        picker_age(json_get_str(o, "modified", NULL), when, sizeof when);
        const char *title = json_get_str(o, "title", "(no prompt yet)");
        loom_str line = LOOM_STR_INIT;
        str_printf(&line, "  %zu. %s  ", k + 1, json_get_str(o, "id", ""));
        term_put_clipped(&line, title, strlen(title), 0);
        str_printf(&line, " \xc2\xb7 %s \xc2\xb7 %lld messages\n", when,
                   (long long)json_get_int(o, "messages", 0));
        fputs(str_cstr(&line), f);
        str_free(&line);
    }
    if (!json_array_size(arr))
        fputs("  (no sessions in this directory)\n", f);
    json_decref(arr);
}

char *picker_nth(const char *sessions_json, const char *arg)
{
    if (!arg || !*arg || *arg == '0' || strspn(arg, "0123456789") != strlen(arg) ||
        strlen(arg) > 6)
        return NULL;
    json_t *arr = parse_list(sessions_json);
    long k = strtol(arg, NULL, 10);
    const char *id = k >= 1 && (size_t)k <= json_array_size(arr)
                         ? json_get_str(json_array_get(arr, (size_t)k - 1), "id", NULL)
                         : NULL;
    char *out = id ? xstrdup(id) : NULL;
    json_decref(arr);
    return out;
}

/* ---- the key loop -------------------------------------------------------------- */

static int read_byte(int timeout_ms)
{
    for (;;) {
        if (timeout_ms >= 0) {
            struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
            int r = poll(&p, 1, timeout_ms);
            if (r == 0)
                return -2;
            if (r < 0 && errno == EINTR)
                continue;
        }
        unsigned char c;
        ssize_t r = read(STDIN_FILENO, &c, 1);
        if (r == 1)
            return c;
        if (r < 0 && errno == EINTR)
            continue;
        return -1;
    }
}

enum { KEY_NONE, KEY_UP, KEY_DOWN, KEY_ENTER, KEY_CANCEL, KEY_BACKSPACE };

/* One key: a digit is returned as itself ('0'..'9'), the rest as KEY_*. */
static int read_key(void)
{
    int c = read_byte(-1);
    if (c < 0 || c == 3 || c == 4 || c == 'q')
        return KEY_CANCEL;
    if (c == '\r' || c == '\n')
        return KEY_ENTER;
    if (c == 127 || c == 8)
        return KEY_BACKSPACE;
    if (c >= '0' && c <= '9')
        return c;
    if (c == 'k')
        return KEY_UP;
    if (c == 'j')
        return KEY_DOWN;
    if (c != 0x1b)
        return KEY_NONE;
    int b = read_byte(ESC_WAIT_MS);
    if (b == -2 || b < 0)
        return KEY_CANCEL; /* Esc on its own */
    if (b != '[' && b != 'O')
        return KEY_NONE;
    int f = read_byte(ESC_WAIT_MS);
    while (f >= '0' && f <= '9') /* parameters, "\x1b[1;5A" */
        f = read_byte(ESC_WAIT_MS);
    if (f == ';')
        while ((f = read_byte(ESC_WAIT_MS)) >= '0' && f <= '9')
            ;
    return f == 'A' ? KEY_UP : f == 'B' ? KEY_DOWN : KEY_NONE;
}

char *picker_choose(term_out *out, const char *sessions_json, const char *current_id,
                    bool *cancelled)
{
    if (cancelled)
        *cancelled = false;
    json_t *arr = parse_list(sessions_json);
    size_t n = json_array_size(arr);
    struct termios saved;
    bool tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
               tcgetattr(STDIN_FILENO, &saved) == 0;
    if (!tty || n == 0) {
        print_rows(out, arr, current_id, -1);
        json_decref(arr);
        return NULL;
    }
    struct termios raw = saved;
    raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO | ISIG);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    term_write_control(out, "\x1b[?25l"); /* the cursor hidden while choosing */
    long sel = 0;
    char typed[8] = "";
    char *chosen = NULL;
    bool done = false;
    size_t limit = n < PICKER_ROWS ? n : PICKER_ROWS;
    while (!done) {
        int rows = print_rows(out, arr, current_id, sel);
        char help[96];
        snprintf(help, sizeof help, "\xe2\x86\x91/\xe2\x86\x93 or a number, Enter resumes, Esc "
                 "cancels%s%s", *typed ? " \xc2\xb7 #" : "", typed);
        loom_str hl = LOOM_STR_INIT;
        term_put_clipped(&hl, help, strlen(help), term_columns() - 1);
        term_printf(out, TONE_DIM, "%s\n", str_cstr(&hl));
        str_free(&hl);
        int lines = rows * 2 + (n > limit ? 1 : 0) + 1;
        int k = read_key();
        size_t tl = strlen(typed);
        if (k == KEY_CANCEL) {
            done = true;
            if (cancelled)
                *cancelled = true;
        } else if (k == KEY_ENTER) {
            long pick = *typed ? strtol(typed, NULL, 10) - 1 : sel;
            if (pick >= 0 && (size_t)pick < n) {
                chosen = xstrdup(json_get_str(json_array_get(arr, (size_t)pick), "id", ""));
                done = true;
            } else {
                typed[0] = '\0';
            }
        } else if (k == KEY_UP) {
            sel = sel > 0 ? sel - 1 : (long)limit - 1;
            typed[0] = '\0';
        } else if (k == KEY_DOWN) {
            sel = (size_t)(sel + 1) < limit ? sel + 1 : 0;
            typed[0] = '\0';
        } else if (k == KEY_BACKSPACE && tl) {
            typed[tl - 1] = '\0';
        } else if (k >= '0' && k <= '9' && tl + 1 < sizeof typed && (tl || k != '0')) {
            typed[tl] = (char)k;
            typed[tl + 1] = '\0';
            long v = strtol(typed, NULL, 10);
            if (v >= 1 && (size_t)v <= limit)
                sel = v - 1;
        }
        if (!done) {
            char up[32];
            snprintf(up, sizeof up, "\x1b[%dA\r\x1b[J", lines);
            term_write_control(out, up);
        }
    }
    term_write_control(out, "\x1b[?25h");
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    json_decref(arr);
    return chosen;
}

/* ---- the recent turns ----------------------------------------------------------- */

/* Up to RECENT_LINES lines of text, each cut to the terminal, then "…". */
static void put_short(term_out *out, const char *mark, term_tone tone, const char *text)
{
    int cols = term_columns() - 4;
    const char *p = text;
    for (int i = 0; i < RECENT_LINES && *p; i++) {
        while (*p == '\n')
            p++;
        size_t len = strcspn(p, "\n");
        loom_str line = LOOM_STR_INIT;
        term_put_clipped(&line, p, len, cols < 10 ? 10 : cols);
        term_printf(out, tone, "%s%s\n", i ? "  " : mark, str_cstr(&line));
        str_free(&line);
        p += len;
    }
    while (*p == '\n')
        p++;
    if (*p)
        term_printf(out, TONE_DIM, "  \xe2\x80\xa6\n");
}

void picker_show_recent(term_out *out, const char *conversation_json)
{
    loom_error ignore;
    json_t *arr = conversation_json ? json_parse(conversation_json, strlen(conversation_json),
                                                 "conversation", &ignore)
                                    : NULL;
    size_t n = json_array_size(arr), from = n;
    int prompts = 0;
    while (from > 0 && prompts < PICKER_RECENT_EXCHANGES)
        if (!strcmp(json_get_str(json_array_get(arr, --from), "kind", ""), "user"))
            prompts++;
    if (prompts)
        term_printf(out, TONE_DIM, "\xe2\x94\x80\xe2\x94\x80 recent conversation\n");
    for (size_t i = from; i < n; i++) {
        const json_t *e = json_array_get(arr, i);
        const char *kind = json_get_str(e, "kind", "");
        if (!strcmp(kind, "user"))
            put_short(out, "\xe2\x80\xba ", TONE_BOLD, json_get_str(e, "text", ""));
        else if (!strcmp(kind, "assistant"))
            put_short(out, "\xe2\x8f\xba ", TONE_PLAIN, json_get_str(e, "text", ""));
    }
    if (prompts)
        term_printf(out, TONE_DIM, "\xe2\x94\x80\xe2\x94\x80\n");
    json_decref(arr);
}
