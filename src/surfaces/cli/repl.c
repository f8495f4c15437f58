/* repl.c — the interactive terminal's line loop: reads a line with
 * libedit and hands it on — a `!` shell command (bang.c; what it printed
 * goes with the next message), a /command (slash.c, through
 * the slash_host the REPL provides), a custom command or skill ("/name
 * args", expanded by the library), a `# note`, or a message run and drawn
 * by run_view.c. Tab completes through complete.c (a command's argument
 * too), Shift-Tab cycles the permission mode, Ctrl-R searches the history,
 * and Esc read during a run interrupts it (keys.h); the footer under the
 * prompt is footer.c's. It also owns the signals and the terminal's modes.
 *
 * Threads: the main thread owns the terminal's input and draws every event;
 * the spinner thread redraws its line; the run's threads only produce
 * events. SIGINT is blocked in every thread but the main one, so Ctrl-C
 * interrupts the line editor's read or the drain loop, never a worker.
 * Output goes through term_out.h, serialized with the spinner. */
#include "surfaces/cli/repl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/sig.h"
#include "base/str.h"
#include "surfaces/cli/bang.h"
#include "surfaces/cli/complete.h"
#include "surfaces/cli/footer.h"
#include "surfaces/cli/keys.h"
#include "surfaces/cli/fold.h"
#include "surfaces/cli/run_view.h"
#include "surfaces/cli/setup.h"
#include "surfaces/cli/slash.h"
#include "surfaces/cli/slash_context.h"
#include "surfaces/cli/slash_ext.h"
#include "surfaces/cli/slash_mcp.h"
#include "surfaces/cli/trust_prompt.h"

#define PROMPT_MORE "\xe2\x80\xa6 "   /* "… " for a continued line */
#define HISTORY_SIZE 1000
/* A Ctrl-C this soon after the one that interrupted a run leaves the program. */
#define SECOND_INTERRUPT_MS 2000

/* ---- signals ---------------------------------------------------------------
 * The handler only touches atomics, loom_run_cancel (an atomic store) and,
 * to leave on a second Ctrl-C, tcsetattr and _exit, all async-signal-safe. */

static loom_run *_Atomic active_run;
static _Atomic long long run_interrupted_ms; /* the Ctrl-C that stopped the last run; 0 none */
static volatile sig_atomic_t sigint_seen;
static volatile sig_atomic_t terminate_seen;
static struct termios tty_saved;       /* before a run's tty_quiet */
static volatile sig_atomic_t tty_saved_ok;
static struct termios tty_orig;        /* as the REPL found the terminal */
/* Keys typed ahead while a question was up, for the next message (see
 * run_view.c's approval key). Main thread only. */
static loom_str typeahead;
/* Keys typed while a run works, read by repl_esc_pressed and not yet in
 * typeahead: a question takes them as the person's typing ahead
 * (repl_take_run_keys), so it can say it kept them. Main thread only. */
static loom_str run_keys;
/* What `!cmd`s printed since the last message (bang.h): the next message
 * carries it. Main thread only. */
static loom_str bang_pending;

bool repl_typeahead_blank(size_t from)
{
    for (size_t i = from; i < typeahead.len; i++)
        if (!strchr(" \t\r\n", typeahead.ptr[i]))
            return false;
    return true;
}

static volatile sig_atomic_t tty_orig_ok;

long long repl_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig)
{
    loom_run *run = atomic_load(&active_run);
    if (sig == SIGUSR1 || sig == SIGUSR2) {
        /* `loom signal SESSION USR1`: an event for the run's heartbeat;
         * between runs, or without a heartbeat taking signals, nothing. */
        if (run)
            loom_run_signal(run, sig == SIGUSR1 ? "SIGUSR1" : "SIGUSR2");
        return;
    }
    if (sig != SIGINT) {
        terminate_seen = 1;
        if (run)
            loom_run_cancel(run);
        return;
    }
    sigint_seen = 1;
    /* The second Ctrl-C of a pair leaves, even when the first one already
     * ended the run and the prompt is back. */
    long long now = repl_mono_ms();
    long long first = atomic_load(&run_interrupted_ms);
    if (first && now - first < SECOND_INTERRUPT_MS) {
        if (tty_orig_ok)
            tcsetattr(STDIN_FILENO, TCSANOW, &tty_orig);
        static const char bye[] = "\r\x1b[2K\n";
        ssize_t ignored = write(STDERR_FILENO, bye, sizeof bye - 1);
        (void)ignored;
        _exit(130);
    }
    if (!run)
        return;
    atomic_store(&run_interrupted_ms, now);
    loom_run_cancel(run);
}

static void install_signals(void)
{
    /* No SA_RESTART: the line editor's read must return so the prompt can
     * be cleared. */
    static const int ending[] = {SIGINT, SIGTERM, SIGHUP};
    sig_set(ending, 3, on_signal, 0);
    /* The heartbeat's signals must not end the REPL (their default) nor
     * disturb the prompt. */
    static const int heartbeat[] = {SIGUSR1, SIGUSR2};
    sig_set(heartbeat, 2, on_signal, SA_RESTART);
}

void repl_tty_quiet(bool quiet)
{
    if (!isatty(STDIN_FILENO))
        return;
    if (quiet) {
        if (tcgetattr(STDIN_FILENO, &tty_saved) != 0)
            return;
        tty_saved_ok = 1;
        struct termios t = tty_saved;
        /* Non-canonical too, so Esc can be read while a run works
         * (repl_esc_pressed); Ctrl-C stays a signal. */
        t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL | ICANON);
        t.c_cc[VMIN] = 0;
        t.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &t);
    } else if (tty_saved_ok) {
        tcsetattr(STDIN_FILENO, TCSANOW, &tty_saved);
        tty_saved_ok = 0;
    }
}

loom_str *repl_typeahead(void)
{
    return &typeahead;
}

static bool stdin_readable(int timeout_ms)
{
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

void repl_take_run_keys(void)
{
    if (run_keys.len)
        str_append(&typeahead, run_keys.ptr, run_keys.len);
    str_clear(&run_keys);
}

bool repl_esc_pressed(void)
{
    if (!tty_saved_ok)
        return false; /* not a terminal, or not quiet: nothing to read */
    unsigned char buf[256];
    size_t n = 0;
    bool esc = false;
    while (n < sizeof buf && stdin_readable(0)) {
        ssize_t got = read(STDIN_FILENO, buf + n, sizeof buf - n);
        if (got <= 0)
            break;
        n += (size_t)got;
        size_t at = 0;
        while (at < n) {
            size_t len = 0;
            key_kind k = keys_next(buf + at, n - at, false, &len);
            if (k == KEY_INCOMPLETE) {
                /* A lone ESC, or a sequence's start: its next byte comes
                 * within a moment if it is a sequence. */
                if (n < sizeof buf && stdin_readable(KEYS_ESC_WAIT_MS)) {
                    got = read(STDIN_FILENO, buf + n, sizeof buf - n);
                    if (got > 0) {
                        n += (size_t)got;
                        continue;
                    }
                }
                k = keys_next(buf + at, n - at, true, &len);
            }
            if (k == KEY_ESC)
                esc = true;
            else if (k == KEY_TEXT && (buf[at] >= 0x20 || strchr("\t\r\n\b", buf[at])))
                str_putc(&run_keys, (char)buf[at]); /* Ctrl-D and the like are no text */
            at += len;
        }
        n = 0;
    }
    return esc;
}

void repl_run_attach(loom_run *run)
{
    atomic_store(&run_interrupted_ms, 0);
    sigint_seen = 0;
    atomic_store(&active_run, run);
}

void repl_run_detach(void)
{
    atomic_store(&active_run, NULL);
}

bool repl_sigint_seen(void)
{
    return sigint_seen != 0;
}

bool repl_terminating(void)
{
    return terminate_seen != 0;
}

static char *shorten_home(const char *path)
{
    const char *home = getenv("HOME");
    size_t n = home ? strlen(home) : 0;
    if (n > 1 && !strncmp(path, home, n) && (path[n] == '/' || !path[n])) {
        loom_str s = LOOM_STR_INIT;
        str_printf(&s, "~%s", path + n);
        return str_steal(&s);
    }
    return xstrdup(path);
}

static void repl_header(repl *r)
{
    char *cwd = shorten_home(r->host.cwd);
    term_printf(&r->host.out, TONE_DIM, "loom %s \xc2\xb7 %s \xc2\xb7 %s \xc2\xb7 %s \xc2\xb7 %s\n",
                loom_version(), loom_agent_model(r->host.agent), loom_agent_provider(r->host.agent), cwd,
                loom_session_id(r->host.session));
    free(cwd);
}

/* ---- sessions ---------------------------------------------------------------- */

static void usage_add_json(slash_usage *u, const char *json)
{
    loom_error ignore;
    json_t *doc = json ? json_parse(json, strlen(json), "usage", &ignore) : NULL;
    u->input += json_get_int(doc, "inputTokens", 0);
    u->output += json_get_int(doc, "outputTokens", 0);
    u->cache_read += json_get_int(doc, "cacheReadTokens", 0);
    u->cache_write += json_get_int(doc, "cacheCreationTokens", 0);
    u->reasoning += json_get_int(doc, "reasoningTokens", 0);
    json_decref(doc);
}

/* The permission mode chosen with /permissions or /plan is the person's
 * choice for this terminal, not one session handle's: /clear, /resume,
 * /fork and /model carry it over, plan mode's way back included. */
static void carry_mode(loom_session *from, loom_session *to)
{
    const char *mode = loom_session_permission_mode(from);
    if (!strcmp(mode, "plan") && loom_session_leave_plan(from, NULL) == 0) {
        /* Learn the mode plan returns to, then put `from` back as it was. */
        loom_session_set_permission_mode(to, loom_session_permission_mode(from), NULL);
        loom_session_set_permission_mode(from, "plan", NULL);
    }
    loom_session_set_permission_mode(to, mode, NULL);
}

static void repl_switch_session(repl *r, loom_session *s, bool keep_usage)
{
    carry_mode(r->host.session, s);
    if (keep_usage) {
        char *u = loom_session_usage_json(r->host.session);
        usage_add_json(&r->host.carried, u);
        free(u);
    } else {
        memset(&r->host.carried, 0, sizeof r->host.carried);
        r->host.cost_usd = r->host.cost_usd < 0 ? -1 : 0;
        free(r->host.last_by_agent);
        r->host.last_by_agent = NULL;
    }
    loom_session_free(r->host.session);
    r->host.session = s;
    for (size_t i = 0; i < loom_session_warning_count(s); i++)
        term_printf(&r->host.out, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", loom_session_warning(s, i));
}

static int repl_reopen(repl *r, const char *model, loom_status *st)
{
    loom_agent *agent = NULL;
    loom_config *cfg = setup_config(&r->opt, true, model ? model : r->model, st);
    if (cfg)
        agent = loom_agent_new(cfg, st);
    loom_config_free(cfg);
    loom_session *s = agent ? loom_session_resume(agent, loom_session_path(r->host.session), st) : NULL;
    if (!s) {
        loom_agent_free(agent);
        return -1;
    }
    repl_switch_session(r, s, true);
    loom_agent_free(r->host.agent);
    r->host.agent = agent;
    footer_setup(&r->footer, agent);
    if (model) {
        free(r->model);
        r->model = xstrdup(model);
    }
    return 0;
}

static void repl_busy_begin(repl *r, const char *label)
{
    repl_tty_quiet(true);
    spinner_begin(r->host.out.spin, label);
}

static void repl_busy_end(repl *r)
{
    spinner_end(r->host.out.spin);
    repl_tty_quiet(false);
}

/* ---- input ----------------------------------------------------------------- */

static const char *prompt_fn(EditLine *el)
{
    repl *r = NULL;
    el_get(el, EL_CLIENTDATA, &r);
    return r && r->prompt ? r->prompt : REPL_PROMPT;
}

/* ---- the footer (footer.h) ---------------------------------------------------- */

static void footer_before_prompt(repl *r)
{
    if (!r->footer.on)
        return;
    if (r->footer.stale)
        footer_refresh(&r->footer, r->host.agent, r->host.session, r->host.cwd, r->host.cost_usd);
    char *line = footer_line(&r->footer, r->host.agent, r->host.session);
    footer_show(line);
    free(line);
    r->footer_drawn = true;
}

/* Shift-Tab: the next permission mode (keys.h), the footer redrawn at once. */
static unsigned char mode_key(EditLine *el, int ch)
{
    (void)ch;
    repl *r = NULL;
    el_get(el, EL_CLIENTDATA, &r);
    if (!r)
        return CC_ERROR;
    loom_session *s = r->host.session;
    const char *next = keys_next_mode(loom_session_permission_mode(s));
    if (!strcmp(loom_session_permission_mode(s), "plan"))
        loom_session_leave_plan(s, NULL); /* plan's own way out, then the cycle's mode */
    loom_status st;
    if (loom_session_set_permission_mode(s, next, &st) != 0)
        return CC_REFRESH_BEEP;
    if (r->footer.on && r->footer_drawn) {
        char *line = footer_line(&r->footer, r->host.agent, r->host.session);
        footer_redraw(line);
        free(line);
    }
    return CC_REFRESH;
}

/* The line editor's reads (EL_GETCFN): libedit's own, one character from
 * stdin, except that a line about to reach the last column first takes the
 * footer away — libedit wraps onto the row below as if it were empty. */
static int read_char(EditLine *el, wchar_t *wc)
{
    repl *r = NULL;
    el_get(el, EL_CLIENTDATA, &r);
    const LineInfo *li = el_line(el);
    if (r && r->footer_drawn && li) {
        int w = 2; /* the prompt */
        for (const char *p = li->buffer; p < li->lastchar; p++)
            w += ((unsigned char)*p & 0xc0) != 0x80;
        if (w >= term_columns() - 2) {
            footer_redraw("");
            r->footer_drawn = false;
        }
    }
    char buf[8];
    size_t n = 0;
    mbstate_t mb;
    memset(&mb, 0, sizeof mb);
    for (;;) {
        ssize_t got = read(STDIN_FILENO, buf + n, 1);
        if (got == 0)
            return 0;
        if (got < 0)
            return -1; /* EINTR: the Ctrl-C or resize the caller looks at */
        n++;
        size_t rc = mbrtowc(wc, buf + n - 1, 1, &mb); /* the state holds the bytes before */
        if (rc == (size_t)-2 && n < sizeof buf)
            continue;
        if (rc == (size_t)-1 || rc == (size_t)-2)
            *wc = (wchar_t)(unsigned char)buf[0]; /* not UTF-8: the byte as it is */
        return 1;
    }
}

static bool input_waiting(void)
{
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* One submission: a line, or several joined — a trailing backslash
 * continues on the next line, and lines that arrive together (a paste)
 * stay together. NULL at end of input (Ctrl-D on an empty line). */
static char *read_input(repl *r)
{
    loom_str buf = LOOM_STR_INIT;
    bool more = false;
    for (;;) {
        if (terminate_seen) {
            str_free(&buf);
            return NULL;
        }
        r->prompt = more ? PROMPT_MORE : REPL_PROMPT;
        el_resize(r->el); /* the window may have changed during a run */
        repl_take_run_keys();
        if (typeahead.len) {
            /* Typed while a question was up: the person's next message.
             * (Only Enters — pressed after an answer key — are no message.) */
            if (!repl_typeahead_blank(0))
                el_push(r->el, str_cstr(&typeahead));
            str_clear(&typeahead);
        }
        sigint_seen = 0;
        int count = 0;
        footer_before_prompt(r);
        const char *line = el_gets(r->el, &count);
        const LineInfo *li = line ? NULL : el_line(r->el);
        bool empty = !buf.len && (!li || li->lastchar == li->buffer);
        if (line && r->footer.on)
            footer_clear(); /* the Enter moved onto the footer's line */
        r->footer_drawn = false;
        if (!line) {
            if (sigint_seen && !terminate_seen) {
                fputs("\n", stdout);
                if (r->footer.on)
                    footer_clear();
                /* Ctrl-C: drop what was typed, fresh prompt; on an empty
                 * prompt twice within a second, leave (keys.h). */
                fflush(stdout);
                if (keys_ctrl_c(&r->ctrl_c_armed, repl_mono_ms(), empty)) {
                    str_free(&buf);
                    return NULL;
                }
                if (r->ctrl_c_armed)
                    term_printf(&r->host.out, TONE_DIM, "press Ctrl-C again to quit\n");
                str_clear(&buf);
                more = false;
                continue;
            }
            if (count < 0 && errno == EINTR && !terminate_seen)
                continue; /* a resize or other signal: footer_show redraws both */
            if (r->footer.on)
                footer_redraw(""); /* Ctrl-D: the footer goes, the prompt stays */
            if (buf.len)
                return str_steal(&buf); /* end of input after a continued line */
            str_free(&buf);
            return NULL;
        }
        r->ctrl_c_armed = 0;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            n--;
        if (n && line[n - 1] == '\\') {
            str_append(&buf, line, n - 1);
            str_putc(&buf, '\n');
            more = true;
            continue;
        }
        str_append(&buf, line, n);
        if (input_waiting()) {
            str_putc(&buf, '\n');
            more = true;
            continue;
        }
        str_puts(&buf, "");
        return str_steal(&buf);
    }
}

char *repl_ask_line(repl *r, const char *prompt)
{
    r->prompt = prompt;
    sigint_seen = 0;
    int count = 0;
    const char *line = el_gets(r->el, &count);
    r->prompt = REPL_PROMPT;
    if (!line) {
        fputs("\n", stdout);
        fflush(stdout);
        return NULL;
    }
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    return xstrndup(line, n);
}

static char *history_file(void)
{
    char *home = loom_home();
    loom_str p = LOOM_STR_INIT;
    str_puts(&p, home);
    free(home);
    loom_error ignore;
    file_mkdirs(p.ptr, 0700, &ignore);
    str_puts(&p, "/history");
    return str_steal(&p);
}

/* History is private: what a person types may hold secrets. */
static void history_save_private(repl *r)
{
    HistEvent ev;
    int fd = open(r->history_path, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0) {
        fchmod(fd, 0600);
        close(fd);
    }
    history(r->hist, &ev, H_SAVE, r->history_path);
    chmod(r->history_path, 0600);
}

/* The names of one field of the array at `key` of a JSON document (or of
 * the document when key is NULL), NULL-terminated; caller frees each. */
static char **json_names(char *json, const char *key, const char *field)
{
    loom_error ignore;
    json_t *doc = json ? json_parse(json, strlen(json), "names", &ignore) : NULL;
    free(json);
    const json_t *arr = key ? json_object_get(doc, key) : doc;
    size_t n = json_array_size(arr), k = 0;
    char **out = xcalloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const char *s = json_get_str(json_array_get(arr, i), field, NULL);
        if (s)
            out[k++] = xstrdup(s);
    }
    json_decref(doc);
    return out;
}

static void names_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

/* Tab (complete.h): the word before the cursor is completed as far as
 * its candidates agree; when they differ they are listed under the line. */
static unsigned char complete_key(EditLine *el, int ch)
{
    (void)ch;
    repl *r = NULL;
    el_get(el, EL_CLIENTDATA, &r);
    const LineInfo *li = el_line(el);
    if (!r || !li)
        return CC_ERROR;
    char *line = xstrndup(li->buffer, (size_t)(li->lastchar - li->buffer));
    size_t cursor = (size_t)(li->cursor - li->buffer);
    char **ext = NULL;
    const char **names = NULL;
    size_t n = 0;
    if (line[strspn(line, " \t")] == '/') { /* the names are only needed after "/" */
        ext = slash_ext_names(&r->host);
        for (const char *b; (b = slash_builtin_name(n)) != NULL; n++)
            ;
        size_t ne = 0;
        while (ext[ne])
            ne++;
        names = xcalloc(n + ne + 1, sizeof *names);
        for (size_t i = 0; i < n; i++)
            names[i] = slash_builtin_name(i);
        for (size_t i = 0; i < ne; i++)
            names[n + i] = ext[i];
    }
    /* A command's argument: the lists it is completed from, gathered only
     * for a "/cmd " line. */
    complete_args args = {0};
    char **models = NULL, **styles = NULL, **servers = NULL, **agents = NULL;
    if (names && strpbrk(line + strspn(line, " \t"), " \t")) {
        /* The table's aliases (sonnet, opus, …), then the current model. */
        models = json_names(loom_models_json(), "models", "alias");
        size_t nm = 0;
        while (models[nm])
            nm++;
        models = xrealloc(models, (nm + 2) * sizeof *models);
        models[nm] = xstrdup(loom_agent_model(r->host.agent));
        models[nm + 1] = NULL;
        styles = json_names(loom_agent_extensions_json(r->host.agent), "output_styles", "name");
        servers = json_names(loom_session_mcp_status_json(r->host.session), NULL, "name");
        loom_status st;
        agents = json_names(loom_session_agents_json(r->host.session, &st), NULL, "agent_id");
        args = (complete_args){(const char *const *)models, (const char *const *)styles,
                               (const char *const *)servers, (const char *const *)agents};
    }
    complete_result res;
    complete_line_args(line, cursor, names, &args, r->host.cwd, &res);
    names_free(models);
    names_free(styles);
    names_free(servers);
    names_free(agents);
    free(line);
    free(names);
    for (size_t i = 0; ext && ext[i]; i++)
        free(ext[i]);
    free(ext);
    unsigned char rc = CC_REFRESH;
    if (*res.insert)
        el_insertstr(el, res.insert);
    if (res.n > 1 || res.more) {
        loom_str list = LOOM_STR_INIT;
        str_puts(&list, "\n\r\x1b[J"); /* over the footer */
        for (size_t i = 0; i < res.n; i++) {
            term_put_clipped(&list, res.cands[i], strlen(res.cands[i]), term_columns() - 2);
            str_puts(&list, i + 1 < res.n ? "  " : "");
        }
        if (res.more)
            str_puts(&list, "  \xe2\x80\xa6");
        str_putc(&list, '\n');
        fputs(str_cstr(&list), stdout);
        fflush(stdout);
        str_free(&list);
        if (r->footer.on && r->footer_drawn) { /* under the prompt drawn again below the list */
            char *under = footer_line(&r->footer, r->host.agent, r->host.session);
            footer_show(under);
            free(under);
        }
        rc = CC_REDISPLAY;
    } else if (res.n == 0) {
        rc = CC_REFRESH_BEEP;
    }
    complete_result_free(&res);
    return rc;
}

static void editor_open(repl *r)
{
    HistEvent ev;
    r->hist = history_init();
    history(r->hist, &ev, H_SETSIZE, HISTORY_SIZE);
    history(r->hist, &ev, H_SETUNIQUE, 1);
    r->history_path = history_file();
    history(r->hist, &ev, H_LOAD, r->history_path);
    r->el = el_init("loom", stdin, stdout, stderr);
    el_set(r->el, EL_CLIENTDATA, r);
    el_set(r->el, EL_EDITOR, "emacs");
    el_set(r->el, EL_PROMPT, prompt_fn);
    el_set(r->el, EL_HIST, history, r->hist);
    el_wset(r->el, EL_GETCFN, read_char); /* wide: the narrow call would take bytes */
    /* The wide call: libedit's narrow EL_ADDFN copies both strings and never
     * frees them (its own comment says so); these are static. */
    el_wset(r->el, EL_ADDFN, L"loom-complete", L"complete a /command or an @path", complete_key);
    el_set(r->el, EL_BIND, "^I", "loom-complete", NULL);
    el_wset(r->el, EL_ADDFN, L"loom-mode", L"the next permission mode", mode_key);
    el_set(r->el, EL_BIND, "\033[Z", "loom-mode", NULL); /* Shift-Tab */
    el_set(r->el, EL_BIND, "^R", "em-inc-search-prev", NULL);
    el_wset(r->el, EL_ADDFN, L"loom-expand", L"print the last folded result whole", fold_key);
    el_set(r->el, EL_BIND, "^O", "loom-expand", NULL);
    el_source(r->el, NULL); /* the user's ~/.editrc, if any (it may rebind Tab) */
}

static void editor_close(repl *r)
{
    if (r->el)
        el_end(r->el);
    if (r->hist)
        history_end(r->hist);
    free(r->history_path);
}

/* ---- !cmd ------------------------------------------------------------------ */

/* Runs a shell command on the terminal, in the session's directory (the
 * host's run_shell: /memory edit); its output is the user's, never sent
 * to the model (`!cmd` is bang.c's). Ctrl-C reaches the
 * command (same process group), while loom itself only notes it. */
static void repl_run_shell(repl *r, const char *cmd)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        term_printf(&r->host.out, TONE_RED, "could not start bash: %s\n", strerror(errno));
        return;
    }
    if (pid == 0) {
        static const int ending[] = {SIGINT, SIGTERM, SIGHUP};
        sig_set(ending, 3, SIG_DFL, 0);
        if (chdir(r->host.cwd) != 0)
            _exit(126);
        execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
        execlp("sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        term_printf(&r->host.out, TONE_RED, "exit %d\n", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        term_printf(&r->host.out, TONE_RED, "killed by signal %d\n", WTERMSIG(status));
}

/* ---- the slash commands' host (slash_host.h) ---------------------------------- */

static repl *host_repl(slash_host *h)
{
    return (repl *)((char *)h - offsetof(repl, host));
}

static void host_header(slash_host *h)
{
    repl_header(host_repl(h));
}

static void host_switch_session(slash_host *h, loom_session *s, bool keep_usage)
{
    repl_switch_session(host_repl(h), s, keep_usage);
}

static int host_reopen(slash_host *h, const char *model, loom_status *st)
{
    return repl_reopen(host_repl(h), model, st);
}

static void host_run_shell(slash_host *h, const char *cmd)
{
    repl_run_shell(host_repl(h), cmd);
}

static void host_busy_begin(slash_host *h, const char *label)
{
    repl_busy_begin(host_repl(h), label);
}

static void host_busy_end(slash_host *h)
{
    repl_busy_end(host_repl(h));
}

static const slash_host_ops host_ops = {
    host_header, host_switch_session, host_reopen, host_run_shell, host_busy_begin, host_busy_end,
};

/* ---- the loop ---------------------------------------------------------------- */

static void pick_locale(void)
{
    /* libedit needs a UTF-8 locale to draw "›" and edit non-ASCII text. */
    const char *loc = setlocale(LC_CTYPE, "");
    if (!loc || !strcmp(loc, "C") || !strcmp(loc, "POSIX"))
        setlocale(LC_CTYPE, "C.UTF-8");
}

static char *absolute_cwd(const char *dir)
{
    char buf[PATH_MAX];
    if (dir && realpath(dir, buf))
        return xstrdup(buf);
    if (!dir && getcwd(buf, sizeof buf))
        return xstrdup(buf);
    return xstrdup(dir ? dir : ".");
}

/* The label of a permission mode that changes what runs without a question
 * (seed 001 §14.1), NULL for default and delegate. */
static const char *mode_label(const char *mode)
{
    if (!mode)
        return NULL;
    if (!strcmp(mode, "plan"))
        return "\xe2\x8f\xb8 plan mode: read-only, nothing is changed or sent out (/plan off)";
    if (!strcmp(mode, "acceptEdits"))
        return "\xe2\x8f\xb5\xe2\x8f\xb5 acceptEdits: file edits in the workspace run without asking";
    if (!strcmp(mode, "bypassPermissions"))
        return "\xe2\x9a\xa0 bypassPermissions: tools run without asking";
    if (!strcmp(mode, "fullAccess"))
        return "\xe2\x9a\xa0 fullAccess: tools run without asking, ask rules and guards included";
    if (!strcmp(mode, "auto"))
        return "auto mode: a classifier answers what the rules leave open";
    if (!strcmp(mode, "dontAsk"))
        return "dontAsk: what would ask is denied";
    return NULL;
}

/* Plan mode and the modes that skip questions stay in sight: a line above
 * every prompt while one is on, since the mode can change mid-session
 * (/permissions, /plan, ExitPlanMode, an edit grant). */
static void show_mode(repl *r)
{
    const char *label = mode_label(loom_session_permission_mode(r->host.session));
    if (label)
        term_printf(&r->host.out, TONE_YELLOW, "%s\n", label);
}

static char *ask_line_cb(void *ctx, const char *prompt)
{
    return repl_ask_line(ctx, prompt);
}

static void submit(repl *r, char *line)
{
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\n'))
        line[--n] = '\0';
    const char *s = line + strspn(line, " \t\n");
    if (!*s)
        return;
    HistEvent ev;
    history(r->hist, &ev, H_ENTER, s);
    history_save_private(r);
    r->footer.stale = true; /* a run or a command may change what it shows */
    if (s[0] == '!') {
        char *block = bang_run(&r->host.out, r->host.cwd, s + 1);
        str_printf(&bang_pending, "%s\n\n", block);
        free(block);
    }
    else if (slash_is_memory_line(s))
        slash_remember(&r->host, s + 1);
    else if (slash_is_mcp_prompt(s))
        run_view_run(r, s); /* the library turns it into the server's prompt */
    else if (s[0] == '/' && !slash_is_builtin(s) && slash_ext_is_invocable(&r->host, s))
        run_view_run(r, s); /* a custom command or skill: the library expands it */
    else if (s[0] == '/' && s[1] != '/')
        slash_run(&r->host, s);
    else if (bang_pending.len) {
        /* The `!cmd` blocks go first, then what was typed (Claude Code's
         * order); they are sent once. */
        str_puts(&bang_pending, s[0] == '/' ? s + 1 : s);
        char *goal = str_steal(&bang_pending);
        run_view_run(r, goal);
        free(goal);
    } else {
        run_view_run(r, s[0] == '/' ? s + 1 : s); /* "//x" sends "/x" */
    }
}

/* On the way out, how to come back, when there is a conversation to come
 * back to (Claude Code prints the same line). */
static void print_resume_hint(repl *r)
{
    char *conv = loom_session_conversation_json(r->host.session);
    bool any = conv && strcmp(conv, "[]") != 0;
    free(conv);
    if (any)
        term_printf(&r->host.out, TONE_DIM, "Resume this session with: loom --resume %s\n",
                    loom_session_id(r->host.session));
}

int repl_main(const cli_options *opt)
{
    pick_locale();
    repl r;
    memset(&r, 0, sizeof r);
    r.opt = *opt;
    const char *no_color = getenv("NO_COLOR");
    r.host.out.color = isatty(STDOUT_FILENO) && !(no_color && *no_color);
    r.host.cost_usd = -1;
    r.host.ops = &host_ops;
    pthread_mutex_init(&r.host.out.lock, NULL);

    loom_status st;
    loom_config *cfg = setup_config(opt, true, NULL, &st);
    if (cfg) /* before the agent: nothing the folder's settings say has counted yet */
        cfg = trust_prompt_ask(opt, cfg, &st);
    if (cfg)
        r.host.agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    if (r.host.agent)
        r.host.session = setup_session(opt, r.host.agent, &st);
    if (!r.host.session) {
        fprintf(stderr, "loom: %s\n", st.message);
        int status = r.host.agent && (opt->resume || opt->continue_latest) ? 1 : 2;
        loom_agent_free(r.host.agent);
        pthread_mutex_destroy(&r.host.out.lock);
        return status;
    }
    r.host.cwd = absolute_cwd(opt->cwd);
    r.host.out.spin = spinner_new(stderr, &r.host.out.lock, r.host.out.color);
    repl_header(&r);
    if (opt->resume || opt->resume_pick || opt->continue_latest)
        slash_show_resumed(&r.host);
    for (size_t i = 0; i < loom_session_warning_count(r.host.session); i++)
        term_printf(&r.host.out, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", loom_session_warning(r.host.session, i));
    const char *mode_note = trust_prompt_mode_notice(loom_session_permission_mode(r.host.session));
    if (mode_note)
        term_printf(&r.host.out, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", mode_note);
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tty_orig) == 0)
        tty_orig_ok = 1;
    r.footer.on = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) && tty_orig_ok;
    r.footer.color = r.host.out.color;
    footer_setup(&r.footer, r.host.agent);
    editor_open(&r);
    install_signals();
    slash_mcp_ask_approvals(&r.host, ask_line_cb, &r);

    if (opt->prompt) {
        /* `loom "prompt"`: the first message comes from the command line. */
        char *first = xstrdup(opt->prompt);
        term_printf(&r.host.out, TONE_BOLD, REPL_PROMPT "%s\n", first);
        submit(&r, first);
        free(first);
    }
    while (!r.host.quit && !terminate_seen) {
        show_mode(&r);
        char *line = read_input(&r);
        if (!line)
            break;
        submit(&r, line);
        free(line);
    }

    if (!terminate_seen)
        fputs("\n", stdout);
    print_resume_hint(&r);
    fflush(stdout);
    editor_close(&r);
    str_free(&typeahead);
    str_free(&run_keys);
    str_free(&bang_pending);
    spinner_free(r.host.out.spin);
    loom_session_free(r.host.session);
    loom_agent_free(r.host.agent);
    free(r.model);
    footer_free(&r.footer);
    free(r.host.cwd);
    free(r.host.last_by_agent);
    pthread_mutex_destroy(&r.host.out.lock);
    return 0;
}
