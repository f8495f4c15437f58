/* repl.c — the interactive terminal's line loop: reads a line with
 * libedit and hands it on — a `!` shell command (bang.c; what it printed
 * goes with the next message), a /command (slash.c, through
 * the slash_host the REPL provides), a custom command or skill ("/name
 * args", expanded by the library), a `# note`, or a message run and drawn
 * by run_view.c. Tab completes through complete.c. It also owns the
 * signals and the terminal's modes.
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

#include "base/fileio.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/sig.h"
#include "base/str.h"
#include "surfaces/cli/bang.h"
#include "surfaces/cli/complete.h"
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
        t.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
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
        if (typeahead.len) {
            /* Typed while a question was up: the person's next message.
             * (Only Enters — pressed after an answer key — are no message.) */
            if (!repl_typeahead_blank(0))
                el_push(r->el, str_cstr(&typeahead));
            str_clear(&typeahead);
        }
        sigint_seen = 0;
        int count = 0;
        const char *line = el_gets(r->el, &count);
        if (!line) {
            if (sigint_seen && !terminate_seen) {
                /* Ctrl-C: drop what was typed, fresh prompt. */
                fputs("\n", stdout);
                fflush(stdout);
                str_clear(&buf);
                more = false;
                continue;
            }
            if (count < 0 && errno == EINTR && !terminate_seen)
                continue; /* a resize or other signal */
            if (buf.len)
                return str_steal(&buf); /* end of input after a continued line */
            str_free(&buf);
            return NULL;
        }
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
    complete_result res;
    complete_line(line, cursor, names, r->host.cwd, &res);
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
        str_putc(&list, '\n');
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
    /* The wide call: libedit's narrow EL_ADDFN copies both strings and never
     * frees them (its own comment says so); these are static. */
    el_wset(r->el, EL_ADDFN, L"loom-complete", L"complete a /command or an @path", complete_key);
    el_set(r->el, EL_BIND, "^I", "loom-complete", NULL);
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
    str_free(&bang_pending);
    spinner_free(r.host.out.spin);
    loom_session_free(r.host.session);
    loom_agent_free(r.host.agent);
    free(r.model);
    free(r.host.cwd);
    free(r.host.last_by_agent);
    pthread_mutex_destroy(&r.host.out.lock);
    return 0;
}
