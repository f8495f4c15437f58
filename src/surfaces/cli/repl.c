/* repl.c — the interactive terminal: reads a line with libedit, carries it
 * out as a run through loom.h, and draws the run's events as they arrive.
 *
 * Threads: the main thread owns the terminal's input and draws every event
 * (it drains the run's queue, so rendering never happens on the run's
 * thread); the spinner thread redraws its line; the run's threads only
 * produce events — and block in ask_user until the main thread has the
 * answer. SIGINT is blocked in every thread but the main one, so Ctrl-C
 * interrupts the line editor's read or the drain loop, never a worker.
 *
 * Output goes to stdout, the spinner to stderr; both are normally the same
 * terminal, so every write holds repl.term and erases the spinner first. */
#include "surfaces/cli/repl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"
#include "base/termsafe.h"
#include "surfaces/cli/render.h"
#include "surfaces/cli/setup.h"
#include "surfaces/cli/slash.h"
#include "surfaces/cli/slash_context.h"
#include "surfaces/cli/trust_prompt.h"

#define PROMPT "\xe2\x80\xba "        /* "› " */
#define PROMPT_MORE "\xe2\x80\xa6 "   /* "… " for a continued line */
#define HISTORY_SIZE 1000
/* A Ctrl-C this soon after the one that interrupted a run leaves the program. */
#define SECOND_INTERRUPT_MS 2000
/* Lines of a tool's result shown under its call. */
#define RESULT_LINES 3

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
 * "the approval key" below). Main thread only. */
static loom_str typeahead;

/* Only blanks (an Enter pressed after an answer key) from `from` on. */
static bool typeahead_blank(size_t from)
{
    for (size_t i = from; i < typeahead.len; i++)
        if (!strchr(" \t\r\n", typeahead.ptr[i]))
            return false;
    return true;
}

static volatile sig_atomic_t tty_orig_ok;

static long long mono_ms(void)
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
    long long now = mono_ms();
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
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    /* No SA_RESTART: the line editor's read must return so the prompt can
     * be cleared. */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    /* The heartbeat's signals must not end the REPL (their default) nor
     * disturb the prompt. */
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
}

/* While a run draws, keys typed ahead are not echoed into its output; they
 * wait in the terminal's buffer for the next prompt. */
static void tty_quiet(bool quiet)
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

/* ---- output ---------------------------------------------------------------- */

int repl_columns(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

static void term_write(repl *r, const char *s, size_t n)
{
    if (!n)
        return;
    pthread_mutex_lock(&r->term);
    spinner_erase_locked(r->spin);
    fwrite(s, 1, n, stdout);
    fflush(stdout);
    /* Output always ends at a line start, so the frame goes below it. */
    if (s[n - 1] == '\n')
        spinner_draw_locked(r->spin);
    pthread_mutex_unlock(&r->term);
}

static const char *tone_code(repl_tone tone)
{
    switch (tone) {
    case TONE_DIM: return "\x1b[2m";
    case TONE_BOLD: return "\x1b[1m";
    case TONE_RED: return "\x1b[31m";
    case TONE_YELLOW: return "\x1b[33m";
    case TONE_GREEN: return "\x1b[32m";
    case TONE_ALERT: return "\x1b[1;31m";
    default: return NULL;
    }
}

/* Appends text in a tone; the tone never outlives the text. */
static void put_tone(const repl *r, loom_str *s, repl_tone tone, const char *text, size_t n)
{
    const char *code = r->color ? tone_code(tone) : NULL;
    if (code)
        str_puts(s, code);
    str_append(s, text, n);
    if (code)
        str_puts(s, "\x1b[0m");
}

void repl_printf(repl *r, repl_tone tone, const char *fmt, ...)
{
    loom_str text = LOOM_STR_INIT;
    va_list ap;
    va_start(ap, fmt);
    str_vprintf(&text, fmt, ap);
    va_end(ap);
    /* What is printed here may hold text from outside (a server's error, a
     * hook's message, a session title, a question's options): escapes in
     * it are shown, never sent. The tones below are the only escapes. */
    loom_str clean = LOOM_STR_INIT;
    termsafe_append(&clean, text.ptr, text.len);
    str_free(&text);
    text = clean;
    loom_str out = LOOM_STR_INIT;
    /* Tone each line on its own, so a newline never carries a color. */
    const char *p = str_cstr(&text);
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        put_tone(r, &out, tone, p, n);
        if (nl)
            str_putc(&out, '\n');
        p += n + (nl != NULL);
    }
    term_write(r, str_cstr(&out), out.len);
    str_free(&out);
    str_free(&text);
}

void repl_write_control(repl *r, const char *seq)
{
    pthread_mutex_lock(&r->term);
    spinner_erase_locked(r->spin);
    fputs(seq, stdout);
    fflush(stdout);
    pthread_mutex_unlock(&r->term);
}

/* Cuts s to at most `cols` characters on one line, with "…" when cut.
 * Control characters (escapes from a tool's output, a CR that would let
 * the rest of a command overwrite its start) are shown in their visible
 * form (base/termsafe.h), so a result cannot restyle or move around the
 * terminal, nor hide part of what a prompt asks about. */
void repl_put_clipped(loom_str *out, const char *s, size_t n, int cols)
{
    const char *nl = memchr(s, '\n', n);
    loom_str safe = LOOM_STR_INIT;
    termsafe_append(&safe, s, nl ? (size_t)(nl - s) : n);
    const char *p = safe.ptr;
    size_t len = safe.len;
    int w = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)p[i];
        if ((c & 0xC0) != 0x80) {
            if (cols > 1 && w >= cols - 1) {
                /* room for the ellipsis only if more follows */
                size_t k = i;
                while (k < len && ((unsigned char)p[k] & 0xC0) == 0x80)
                    k++;
                if (k < len) {
                    str_puts(out, "\xe2\x80\xa6");
                    break;
                }
            }
            w++;
        }
        str_putc(out, c == '\t' ? ' ' : (char)c);
    }
    str_free(&safe);
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

void repl_header(repl *r)
{
    char *cwd = shorten_home(r->cwd);
    repl_printf(r, TONE_DIM, "loom %s \xc2\xb7 %s \xc2\xb7 %s \xc2\xb7 %s \xc2\xb7 %s\n",
                loom_version(), loom_agent_model(r->agent), loom_agent_provider(r->agent), cwd,
                loom_session_id(r->session));
    free(cwd);
}

/* ---- sessions ---------------------------------------------------------------- */

static void usage_add_json(repl_usage *u, const char *json)
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

void repl_switch_session(repl *r, loom_session *s, bool keep_usage)
{
    carry_mode(r->session, s);
    if (keep_usage) {
        char *u = loom_session_usage_json(r->session);
        usage_add_json(&r->carried, u);
        free(u);
    } else {
        memset(&r->carried, 0, sizeof r->carried);
        r->cost_usd = r->cost_usd < 0 ? -1 : 0;
    }
    loom_session_free(r->session);
    r->session = s;
    for (size_t i = 0; i < loom_session_warning_count(s); i++)
        repl_printf(r, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", loom_session_warning(s, i));
}

int repl_reopen(repl *r, const char *model, loom_status *st)
{
    loom_agent *agent = NULL;
    loom_config *cfg = setup_config(&r->opt, true, model ? model : r->model, st);
    if (cfg)
        agent = loom_agent_new(cfg, st);
    loom_config_free(cfg);
    loom_session *s = agent ? loom_session_resume(agent, loom_session_path(r->session), st) : NULL;
    if (!s) {
        loom_agent_free(agent);
        return -1;
    }
    repl_switch_session(r, s, true);
    loom_agent_free(r->agent);
    r->agent = agent;
    if (model) {
        free(r->model);
        r->model = xstrdup(model);
    }
    return 0;
}

void repl_busy_begin(repl *r, const char *label)
{
    tty_quiet(true);
    spinner_begin(r->spin, label);
}

void repl_busy_end(repl *r)
{
    spinner_end(r->spin);
    tty_quiet(false);
}

/* ---- input ----------------------------------------------------------------- */

static const char *prompt_fn(EditLine *el)
{
    repl *r = NULL;
    el_get(el, EL_CLIENTDATA, &r);
    return r && r->prompt ? r->prompt : PROMPT;
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
        r->prompt = more ? PROMPT_MORE : PROMPT;
        el_resize(r->el); /* the window may have changed during a run */
        if (typeahead.len) {
            /* Typed while a question was up: the person's next message.
             * (Only Enters — pressed after an answer key — are no message.) */
            if (!typeahead_blank(0))
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
    r->prompt = PROMPT;
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
    el_source(r->el, NULL); /* the user's ~/.editrc, if any */
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

/* Runs a shell command on the terminal, in the session's directory; its
 * output is the user's, never sent to the model. Ctrl-C reaches the
 * command (same process group), while loom itself only notes it. */
void repl_run_shell(repl *r, const char *cmd)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        repl_printf(r, TONE_RED, "could not start bash: %s\n", strerror(errno));
        return;
    }
    if (pid == 0) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(SIGINT, &dfl, NULL);
        sigaction(SIGTERM, &dfl, NULL);
        sigaction(SIGHUP, &dfl, NULL);
        if (chdir(r->cwd) != 0)
            _exit(126);
        execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
        execlp("sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        repl_printf(r, TONE_RED, "exit %d\n", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        repl_printf(r, TONE_RED, "killed by signal %d\n", WTERMSIG(status));
}

/* ---- one run, drawn --------------------------------------------------------- */

typedef struct started_call {
    char *id;
    char *header;    /* "Bash(npm test)" */
} started_call;

/* AskUserQuestion: the run's thread hands the questions to the main thread
 * and waits for its answer. */
typedef struct ask_slot {
    pthread_mutex_t m;
    pthread_cond_t c;
    char *questions;     /* set while a question waits */
    char *answer;
    bool answered;
} ask_slot;

typedef struct run_view {
    repl *r;
    loom_run *run;
    render_stream *md;
    long long tokens_done;   /* output tokens of finished model calls */
    long long bytes_now;     /* text + reasoning bytes of the call under way */
    bool turn_text;          /* this model call printed text */
    started_call *calls;
    size_t n_calls;
    const char *last_header; /* id of the call whose header was printed last */
    int tools_running;
    ask_slot ask;
} run_view;

static char *ask_from_run(void *ctx, const char *questions_json)
{
    ask_slot *a = ctx;
    pthread_mutex_lock(&a->m);
    a->questions = xstrdup(questions_json);
    a->answered = false;
    while (!a->answered)
        pthread_cond_wait(&a->c, &a->m);
    char *answer = a->answer;
    a->answer = NULL;
    free(a->questions);
    a->questions = NULL;
    pthread_mutex_unlock(&a->m);
    return answer;
}

static void view_tokens(run_view *v)
{
    /* Until a call reports its usage, its bytes stand in (about 4 a token). */
    spinner_tokens(v->r->spin, v->tokens_done + v->bytes_now / 4);
}

static void flush_text(run_view *v)
{
    loom_str out = LOOM_STR_INIT;
    render_stream_finish(v->md, &out);
    term_write(v->r, str_cstr(&out), out.len);
    str_free(&out);
}

static const char *field(const json_t *input, const char *key)
{
    const char *s = json_get_str(input, key, NULL);
    return s && *s ? s : NULL;
}

/* The most telling input of a call, as the user would recognise it. */
static char *call_argument(const repl *r, const char *tool, const json_t *input)
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
    if (!s)
        return xstrdup("");
    /* Paths inside the working directory read better relative. */
    size_t n = strlen(r->cwd);
    if (!strncmp(s, r->cwd, n) && s[n] == '/' && s[n + 1])
        s += n + 1;
    return xstrdup(s);
}

static void print_header(run_view *v, const char *header, bool failed)
{
    repl *r = v->r;
    loom_str out = LOOM_STR_INIT;
    str_putc(&out, '\n'); /* a blank line before each block */
    put_tone(r, &out, failed ? TONE_RED : TONE_PLAIN, "\xe2\x97\x8f ", 4); /* ● */
    loom_str bold = LOOM_STR_INIT;
    repl_put_clipped(&bold, header, strlen(header), repl_columns() - 2);
    put_tone(r, &out, TONE_BOLD, str_cstr(&bold), bold.len);
    str_putc(&out, '\n');
    term_write(r, str_cstr(&out), out.len);
    str_free(&out);
    str_free(&bold);
}

static void on_tool_started(run_view *v, const json_t *p)
{
    const char *tool = json_get_str(p, "tool", "?");
    const char *id = json_get_str(p, "call_id", "");
    char *arg = call_argument(v->r, tool, json_get_obj(p, "input"));
    loom_str h = LOOM_STR_INIT;
    /* One line: a multi-line command shows its first line. */
    size_t first = strcspn(arg, "\n");
    str_printf(&h, "%s(%.*s%s)", tool, (int)first, arg, arg[first] ? " \xe2\x80\xa6" : "");
    free(arg);
    v->calls = xrealloc(v->calls, (v->n_calls + 1) * sizeof *v->calls);
    v->calls[v->n_calls].id = xstrdup(id);
    v->calls[v->n_calls].header = str_steal(&h);
    print_header(v, v->calls[v->n_calls].header, false);
    v->last_header = v->calls[v->n_calls].id;
    v->n_calls++;
    v->tools_running++;
    char label[96];
    snprintf(label, sizeof label, "Running %s\xe2\x80\xa6", tool);
    spinner_label(v->r->spin, label);
}

static void on_tool_done(run_view *v, const json_t *p)
{
    repl *r = v->r;
    const char *id = json_get_str(p, "call_id", "");
    const char *tool = json_get_str(p, "tool", "?");
    bool error = json_get_bool(p, "is_error", false);
    const char *output = json_get_str(p, "output", "");
    long long total = json_get_int(p, "output_chars", 0);
    size_t len = strlen(output);
    bool cut = total > (long long)len;
    /* Results of parallel calls can come after another call's header. */
    if (!v->last_header || strcmp(v->last_header, id) != 0)
        for (size_t i = 0; i < v->n_calls; i++)
            if (!strcmp(v->calls[i].id, id)) {
                print_header(v, v->calls[i].header, error);
                break;
            }
    v->last_header = NULL;
    while (len && (output[len - 1] == '\n' || output[len - 1] == '\r'))
        len--;
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += output[i] == '\n';
    lines += len > 0;

    int cols = repl_columns() - 5;
    loom_str out = LOOM_STR_INIT;
    repl_tone tone = error ? TONE_RED : TONE_PLAIN;
    const char *lead = "  \xe2\x8e\xbf  "; /* "  ⎿  " */
    if (!len) {
        str_puts(&out, lead);
        put_tone(r, &out, error ? TONE_RED : TONE_DIM, error ? "(failed, no message)" : "(no output)",
                 error ? 20 : 11);
        str_putc(&out, '\n');
    } else if ((!strcmp(tool, "Edit") || !strcmp(tool, "Write")) && !error) {
        /* "The file … has been updated." — the snippet after it is for the model. */
        const char *nl = memchr(output, '\n', len);
        size_t n = nl ? (size_t)(nl - output) : len;
        const char *here = strstr(output, " Here is the result");
        if (here && (size_t)(here - output) < n)
            n = (size_t)(here - output);
        loom_str line = LOOM_STR_INIT;
        repl_put_clipped(&line, output, n, cols);
        str_puts(&out, lead);
        put_tone(r, &out, TONE_DIM, str_cstr(&line), line.len);
        str_putc(&out, '\n');
        str_free(&line);
    } else if (!strcmp(tool, "Read") && !error) {
        char msg[64];
        snprintf(msg, sizeof msg, "Read %zu%s line%s", lines, cut ? "+" : "", lines == 1 && !cut ? "" : "s");
        str_puts(&out, lead);
        put_tone(r, &out, TONE_DIM, msg, strlen(msg));
        str_putc(&out, '\n');
    } else {
        const char *s = output;
        const char *end = output + len;
        for (size_t i = 0; i < RESULT_LINES && s < end; i++) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
            loom_str line = LOOM_STR_INIT;
            repl_put_clipped(&line, s, n, cols);
            str_puts(&out, i == 0 ? lead : "     ");
            put_tone(r, &out, tone, str_cstr(&line), line.len);
            str_putc(&out, '\n');
            str_free(&line);
            s = nl ? nl + 1 : end;
        }
        if (lines > RESULT_LINES || cut) {
            char more[96];
            if (cut)
                snprintf(more, sizeof more, "\xe2\x80\xa6 +%zu lines (%lld characters in all)",
                         lines > RESULT_LINES ? lines - RESULT_LINES : 0, total);
            else
                snprintf(more, sizeof more, "\xe2\x80\xa6 +%zu lines", lines - RESULT_LINES);
            str_puts(&out, "     ");
            put_tone(r, &out, TONE_DIM, more, strlen(more));
            str_putc(&out, '\n');
        }
    }
    term_write(r, str_cstr(&out), out.len);
    str_free(&out);
    if (--v->tools_running <= 0) {
        v->tools_running = 0;
        spinner_label(r->spin, "Thinking\xe2\x80\xa6");
    }
}

static void on_warning(run_view *v, const json_t *p)
{
    const char *kind = json_get_str(p, "kind", "");
    if (!strcmp(kind, "model_retry")) {
        /* The reply starts over: what is held back belongs to the failed try. */
        render_stream_discard(v->md);
        v->bytes_now = 0;
        view_tokens(v);
        /* One line each: the final error, if it comes to that, is shown whole. */
        loom_str msg = LOOM_STR_INIT, line = LOOM_STR_INIT;
        str_printf(&msg, "retry %lld in %.1fs%s \xc2\xb7 %s: %s",
                   (long long)json_get_int(p, "attempt", 0), json_get_num(p, "delay_s", 0),
                   v->turn_text ? " (the reply starts over)" : "", json_get_str(p, "code", ""),
                   json_get_str(p, "message", ""));
        repl_put_clipped(&line, str_cstr(&msg), msg.len, repl_columns() - 2);
        repl_printf(v->r, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", str_cstr(&line));
        str_free(&msg);
        str_free(&line);
        v->turn_text = false;
        return;
    }
    flush_text(v);
    repl_printf(v->r, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", json_get_str(p, "message", kind));
}

/* heartbeat.event: something changed in the world while the run worked
 * (docs/heartbeat.md). One line, e.g.
 *   ⚡ event high · filesystem: src/a.c modified (…) (ev_<uuidv7>)
 * with the whole id (a UUIDv7's head is its timestamp: a prefix would not
 * tell events apart), the summary cut so the id stays on the line;
 * critical in bold red, high in yellow. /events lists them with their state. */
static void on_heartbeat(run_view *v, const json_t *p)
{
    flush_text(v);
    const char *urgency = json_get_str(p, "urgency", "low");
    const char *summary = json_get_str(p, "summary", "");
    const char *id = json_get_str(p, "event_id", "");
    loom_str head = LOOM_STR_INIT, line = LOOM_STR_INIT;
    str_printf(&head, "\xe2\x9a\xa1 event %s \xc2\xb7 %s: ", urgency,
               json_get_str(p, "source", "?"));
    int cols = repl_columns() - 2;
    int room = cols - (int)render_display_width(head.ptr, head.len) - (int)strlen(id) - 3;
    repl_put_clipped(&line, head.ptr, head.len, 0);
    repl_put_clipped(&line, summary, strlen(summary), room < 16 ? 16 : room);
    if (*id) {
        str_puts(&line, " (");
        repl_put_clipped(&line, id, strlen(id), 0);
        str_putc(&line, ')');
    }
    repl_tone tone = !strcmp(urgency, "critical") ? TONE_ALERT
                     : !strcmp(urgency, "high")   ? TONE_YELLOW
                                                  : TONE_PLAIN;
    repl_printf(v->r, tone, "%s\n", str_cstr(&line));
    str_free(&head);
    str_free(&line);
    /* The line sits between a running call and its result: repeat the
     * call's line above the result. */
    v->last_header = NULL;
}

/* Lines of a command shown in an approval before "… +N lines": enough to
 * judge a script, not so many that the question scrolls away. */
#define APPROVAL_LINES 12

/* What the person approves, shown whole: Bash's command line by line (a
 * one-line header could hide a second line), otherwise the call's argument
 * as the tool line shows it. */
static void approval_subject(run_view *v, loom_str *out, const char *tool, const json_t *input)
{
    repl *r = v->r;
    int cols = repl_columns() - 4;
    const char *cmd = !strcmp(tool, "Bash") ? field(input, "command") : NULL;
    if (!cmd) {
        char *arg = call_argument(r, tool, input);
        if (*arg) {
            loom_str line = LOOM_STR_INIT;
            repl_put_clipped(&line, arg, strlen(arg), cols);
            str_puts(out, "    ");
            put_tone(r, out, TONE_BOLD, str_cstr(&line), line.len);
            str_putc(out, '\n');
            str_free(&line);
        }
        free(arg);
        return;
    }
    const char *s = cmd;
    size_t shown = 0, total = 1;
    for (const char *p = cmd; *p; p++)
        total += *p == '\n' && p[1];
    while (*s && shown < APPROVAL_LINES) {
        size_t n = strcspn(s, "\n");
        loom_str line = LOOM_STR_INIT;
        repl_put_clipped(&line, s, n, cols);
        str_puts(out, "    ");
        put_tone(r, out, TONE_BOLD, str_cstr(&line), line.len);
        str_putc(out, '\n');
        str_free(&line);
        shown++;
        s += n + (s[n] == '\n');
    }
    if (total > shown) {
        char more[48];
        snprintf(more, sizeof more, "    \xe2\x80\xa6 +%zu lines\n", total - shown);
        put_tone(r, out, TONE_DIM, more, strlen(more));
    }
}

/* ---- the approval key ---------------------------------------------------------
 * An approval is answered by one key pressed after the question is shown.
 * What was typed before — a message for later, typed while the run worked
 * — is never read as the answer: it waits in the terminal's buffer (tty
 * quiet mode keeps it there), so when a question appears it is moved to
 * `typeahead` and handed to the line editor at the next prompt, as the
 * person typed it. Keys that keep coming right after the question appears
 * are typing, not an answer: a key counts only once the keyboard has been
 * quiet for KEY_QUIET_MS since the question appeared or the last key. */

#define KEY_QUIET_MS 500


/* Non-canonical, no echo; Ctrl-C still a signal. *before gets the state to
 * restore. False when stdin is not a terminal. */
static bool tty_keys_begin(struct termios *before)
{
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, before) != 0)
        return false;
    struct termios t = *before;
    t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ECHONL);
    t.c_cc[VMIN] = 0;
    t.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &t);
    return true;
}

/* Moves whatever is waiting on stdin (a half-typed line included: it is
 * readable once the terminal is non-canonical) to typeahead. */
static void drain_typeahead(void)
{
    char buf[512];
    for (;;) {
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN))
            return;
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n <= 0)
            return;
        str_append(&typeahead, buf, (size_t)n);
    }
}

/* Before any question: what was typed ahead stays out of its answer. */
static void keep_typeahead(void)
{
    struct termios before;
    if (!tty_keys_begin(&before))
        return;
    drain_typeahead();
    tcsetattr(STDIN_FILENO, TCSANOW, &before);
}

/* Shows what was kept, so the person knows it was not taken as the answer. */
static void note_typeahead(repl *r, size_t shown)
{
    if (typeahead.len <= shown || typeahead_blank(0))
        return;
    loom_str line = LOOM_STR_INIT;
    str_puts(&line, "  kept for your next message: ");
    loom_str flat = LOOM_STR_INIT;
    for (size_t i = 0; i < typeahead.len; i++)
        str_putc(&flat, typeahead.ptr[i] == '\n' || typeahead.ptr[i] == '\r' ? ' ' : typeahead.ptr[i]);
    repl_put_clipped(&line, flat.ptr, flat.len, repl_columns() - 32);
    str_putc(&line, '\n');
    loom_str out = LOOM_STR_INIT;
    put_tone(r, &out, TONE_DIM, line.ptr, line.len - 1);
    str_putc(&out, '\n');
    term_write(r, out.ptr, out.len);
    str_free(&out);
    str_free(&flat);
    str_free(&line);
}

/* The answer key: 'y', 'a' (only when offered), 'n'; -1 for Ctrl-C, Ctrl-D,
 * the end of input or the REPL ending. Enter and other keys are ignored. */
static int approval_key(bool offer_always)
{
    long long quiet_since = mono_ms();
    for (;;) {
        if (sigint_seen || terminate_seen)
            return -1;
        struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
        int rc = poll(&p, 1, 100);
        if (rc <= 0)
            continue; /* timeout, or a signal: checked above */
        if (!(p.revents & POLLIN))
            return -1; /* hung up */
        unsigned char c;
        ssize_t n = read(STDIN_FILENO, &c, 1);
        if (n == 0)
            return -1;
        if (n < 0)
            continue;
        long long now = mono_ms();
        if (now - quiet_since < KEY_QUIET_MS) {
            str_putc(&typeahead, (char)c); /* still typing: not an answer */
            quiet_since = now;
            continue;
        }
        if (c == 0x1b) {
            /* Esc alone denies; an arrow key's sequence is not a key. */
            struct pollfd q = {.fd = STDIN_FILENO, .events = POLLIN};
            if (poll(&q, 1, 30) == 1) {
                char junk[32];
                ssize_t ignored = read(STDIN_FILENO, junk, sizeof junk);
                (void)ignored;
                continue;
            }
            return 'n';
        }
        if (c == 0x04)
            return -1;
        if (c == 'y' || c == 'Y')
            return 'y';
        if (c == 'n' || c == 'N')
            return 'n';
        if ((c == 'a' || c == 'A') && offer_always)
            return 'a';
    }
}

/* approval.requested: show what would run, why it needs a person and the
 * exact grant "always" would make, then read one key. Nothing runs and
 * nothing is saved before that key. */
static void on_approval(run_view *v, const json_t *p)
{
    repl *r = v->r;
    const char *id = json_get_str(p, "approval_id", json_get_str(p, "id", NULL));
    if (!id)
        return;
    flush_text(v);
    spinner_end(r->spin);
    struct termios before;
    bool keys = tty_keys_begin(&before);
    size_t kept = typeahead.len;
    if (keys)
        drain_typeahead();
    const char *tool = json_get_str(p, "tool", "this tool");
    const json_t *input = json_get_obj(p, "input");
    const char *why = json_get_str(p, "message", json_get_str(p, "reason", ""));
    const json_t *always = json_get_obj(p, "always");
    const char *grant = json_get_str(always, "label", NULL);
    bool session_edits = !strcmp(json_get_str(always, "kind", ""), "session_edits");
    loom_str out = LOOM_STR_INIT;
    loom_str head = LOOM_STR_INIT;
    str_printf(&head, "? Allow this %.100s call?", tool);
    loom_str line = LOOM_STR_INIT;
    repl_put_clipped(&line, head.ptr, head.len, repl_columns() - 2);
    str_putc(&out, '\n');
    put_tone(r, &out, TONE_YELLOW, line.ptr, line.len);
    str_putc(&out, '\n');
    str_free(&head);
    approval_subject(v, &out, tool, input);
    if (*why) {
        str_clear(&line);
        repl_put_clipped(&line, why, strlen(why), repl_columns() - 2);
        str_puts(&out, "  ");
        put_tone(r, &out, TONE_DIM, str_cstr(&line), line.len);
        str_putc(&out, '\n');
    }
    /* The grant, word for word: what `a` saves (or allows for the session). */
    str_clear(&line);
    if (grant && *grant) {
        str_puts(&out, "  ");
        put_tone(r, &out, TONE_DIM, session_edits ? "a: " : "a saves ", session_edits ? 3 : 8);
        repl_put_clipped(&line, grant, strlen(grant), repl_columns() - 12);
        put_tone(r, &out, TONE_BOLD, line.ptr, line.len);
        if (!session_edits) {
            static const char where[] = " in .loom/settings.local.json";
            put_tone(r, &out, TONE_DIM, where, sizeof where - 1);
        }
        str_putc(&out, '\n');
    } else {
        const char *why_not = json_get_str(always, "why_not", "");
        str_puts(&out, "  ");
        static const char no[] = "no \"always\" for this call";
        put_tone(r, &out, TONE_DIM, no, sizeof no - 1);
        if (*why_not) {
            repl_put_clipped(&line, why_not, strlen(why_not), repl_columns() - 40);
            put_tone(r, &out, TONE_DIM, ": ", 2);
            put_tone(r, &out, TONE_DIM, line.ptr, line.len);
        }
        str_putc(&out, '\n');
    }
    str_free(&line);
    const char *choices = grant ? "  y = allow once \xc2\xb7 a = allow always \xc2\xb7 n or Esc = deny"
                                : "  y = allow once \xc2\xb7 n or Esc = deny";
    put_tone(r, &out, TONE_DIM, choices, strlen(choices));
    str_putc(&out, '\n');
    term_write(r, str_cstr(&out), out.len);
    str_free(&out);
    note_typeahead(r, kept);
    const char *ask = grant ? "allow? [y/a/n] " PROMPT : "allow? [y/n] " PROMPT;
    term_write(r, ask, strlen(ask));
    /* The answer sits between the call and its result: repeat the call's
     * line above the result. */
    v->last_header = NULL;

    size_t before_keys = typeahead.len;
    int key = keys ? approval_key(grant != NULL) : -1;
    if (keys)
        tcsetattr(STDIN_FILENO, TCSANOW, &before);
    const char *shown = key == 'y' ? "yes" : key == 'a' ? "always" : key == 'n' ? "no" : "";
    term_write(r, shown, strlen(shown));
    term_write(r, "\n", 1);
    note_typeahead(r, before_keys);
    const char *decision = key == 'y' ? "allow" : key == 'a' ? "allow_always" : "deny";
    char *reason = NULL;
    if (key == 'n') {
        /* A reason is optional; it goes to the model with the denial. */
        tty_quiet(false);
        reason = repl_ask_line(r, "  reason for the model (Enter for none) " PROMPT);
        tty_quiet(true);
    }
    const char *why_denied = reason && *reason ? reason + strspn(reason, " \t") : "denied in the REPL";
    loom_status st;
    if (loom_run_answer(v->run, id, decision, key == 'n' || key < 0 ? why_denied : NULL, &st) != 0)
        repl_printf(r, TONE_RED, "%s\n", st.message);
    else if (key == 'a' && session_edits)
        repl_printf(r, TONE_DIM, "  Allowed; edits inside the workspace are accepted for the rest "
                    "of this session (permission mode acceptEdits, not saved)\n");
    else if (key == 'a')
        repl_printf(r, TONE_DIM, "  Allowed; saved %s in .loom/settings.local.json, calls it "
                    "covers will not ask again\n", grant);
    if (key < 0)
        loom_run_cancel(v->run); /* Ctrl-C or Ctrl-D: the person wants the run stopped */
    free(reason);
    spinner_begin(r->spin, "Thinking\xe2\x80\xa6");
}

/* Builds {"question": "label", …} from what was typed for each question:
 * option numbers (several, comma-separated, when multiSelect) or free text. */
static char *ask_person(run_view *v, const char *questions_json)
{
    repl *r = v->r;
    loom_error ignore;
    json_t *qs = json_parse(questions_json, strlen(questions_json), "questions", &ignore);
    json_t *answers = json_object();
    size_t i;
    json_t *q;
    bool dismissed = false;
    json_array_foreach(qs, i, q) {
        const char *text = json_get_str(q, "question", "?");
        const json_t *opts = json_get_arr(q, "options");
        bool multi = json_get_bool(q, "multiSelect", false);
        repl_printf(r, TONE_BOLD, "? %s\n", text);
        size_t k;
        json_t *o;
        json_array_foreach(opts, k, o) {
            const char *desc = json_get_str(o, "description", "");
            repl_printf(r, TONE_PLAIN, "  %zu. %s%s", k + 1, json_get_str(o, "label", ""),
                        *desc ? "" : "\n");
            if (*desc)
                repl_printf(r, TONE_DIM, " \xe2\x80\x94 %s\n", desc);
        }
        repl_printf(r, TONE_DIM, multi ? "  numbers separated by commas, or your own answer\n"
                                       : "  a number, or your own answer\n");
        char *line = repl_ask_line(r, PROMPT);
        if (!line) {
            dismissed = true;
            break;
        }
        /* Numbers pick options; anything else is the answer itself. */
        json_t *picked = json_array();
        bool numbers = *line != '\0';
        for (char *tok = line; numbers && *tok;) {
            char *end;
            long n = strtol(tok, &end, 10);
            if (end == tok || n < 1 || (size_t)n > json_array_size(opts)) {
                numbers = false;
                break;
            }
            json_array_append(picked, json_object_get(json_array_get(opts, (size_t)n - 1), "label"));
            tok = end + strspn(end, " ,");
        }
        if (numbers && json_array_size(picked) > 0)
            json_object_set(answers, text,
                            multi ? picked : json_array_get(picked, 0));
        else
            json_object_set_new(answers, text, json_string(line));
        json_decref(picked);
        free(line);
    }
    char *out = dismissed ? NULL : json_dump_compact(answers);
    json_decref(answers);
    json_decref(qs);
    return out;
}

static void serve_question(run_view *v)
{
    pthread_mutex_lock(&v->ask.m);
    char *questions = v->ask.questions && !v->ask.answered ? xstrdup(v->ask.questions) : NULL;
    pthread_mutex_unlock(&v->ask.m);
    if (!questions)
        return;
    flush_text(v);
    spinner_end(v->r->spin);
    size_t kept = typeahead.len;
    keep_typeahead();
    note_typeahead(v->r, kept);
    tty_quiet(false);
    char *answer = sigint_seen ? NULL : ask_person(v, questions);
    tty_quiet(true);
    free(questions);
    if (!answer && sigint_seen)
        loom_run_cancel(v->run);
    v->last_header = NULL; /* the answer sits between the call and its result */
    pthread_mutex_lock(&v->ask.m);
    v->ask.answer = answer;
    v->ask.answered = true;
    pthread_cond_signal(&v->ask.c);
    pthread_mutex_unlock(&v->ask.m);
    spinner_begin(v->r->spin, "Thinking\xe2\x80\xa6");
    view_tokens(v);
}

static void on_token(run_view *v, const loom_event *ev)
{
    size_t n = strlen(ev->text);
    v->bytes_now += (long long)n;
    view_tokens(v);
    if (!n || !ev->channel || strcmp(ev->channel, "text") != 0)
        return; /* reasoning shows as the spinner's "Thinking…" only */
    if (!v->turn_text)
        term_write(v->r, "\n", 1); /* a blank line before each block */
    loom_str out = LOOM_STR_INIT;
    render_stream_feed(v->md, ev->text, n, &out);
    term_write(v->r, str_cstr(&out), out.len);
    v->turn_text = true;
    str_free(&out);
}

static void on_event(run_view *v, const loom_event *ev)
{
    if (ev->text) {
        on_token(v, ev); /* tokens carry their text: no JSON to parse */
        return;
    }
    loom_error ignore;
    json_t *doc = json_parse(ev->json, strlen(ev->json), "event", &ignore);
    const json_t *p = json_get_obj(doc, "payload");
    const char *type = ev->type;
    if (!strcmp(type, "model.completed")) {
        flush_text(v);
        v->tokens_done += json_get_int(json_get_obj(p, "usage"), "outputTokens", 0);
        v->bytes_now = 0;
        v->turn_text = false;
        view_tokens(v);
    } else if (!strcmp(type, "tool.started")) {
        flush_text(v);
        on_tool_started(v, p);
    } else if (!strcmp(type, "tool.finished") || !strcmp(type, "tool.failed")) {
        on_tool_done(v, p);
    } else if (!strcmp(type, "warning.emitted")) {
        on_warning(v, p);
    } else if (!strcmp(type, "heartbeat.event")) {
        on_heartbeat(v, p);
    } else if (!strcmp(type, "approval.requested")) {
        on_approval(v, p);
    }
    json_decref(doc);
}

/* The last word of a run that did not simply complete. */
static void show_outcome(run_view *v, const char *result_json)
{
    repl *r = v->r;
    loom_error ignore;
    json_t *res = json_parse(result_json, strlen(result_json), "result", &ignore);
    const char *state = json_get_str(res, "state", "failed");
    if (json_is_number(json_object_get(res, "cost_usd"))) {
        if (r->cost_usd < 0)
            r->cost_usd = 0;
        r->cost_usd += json_get_num(res, "cost_usd", 0);
    }
    const json_t *err = json_get_obj(res, "error");
    if (!strcmp(state, "cancelled")) {
        repl_printf(r, TONE_YELLOW,
                    "  \xe2\x8e\xbf  Interrupted by user \xc2\xb7 say what to do instead, or "
                    "/rewind to undo the turn\n");
    } else if (strcmp(state, "completed") != 0) {
        repl_printf(r, TONE_RED, "\xe2\x9c\x97 %s \xc2\xb7 %s%s%s%s\n", state,
                    json_get_str(err, "message", json_get_str(res, "stop_reason", "")),
                    err ? " [" : "", err ? json_get_str(err, "code", "") : "", err ? "]" : "");
    }
    json_decref(res);
}

static void run_prompt(repl *r, const char *goal)
{
    run_view v = {.r = r};
    v.md = render_stream_new(r->color, repl_columns());
    pthread_mutex_init(&v.ask.m, NULL);
    pthread_cond_init(&v.ask.c, NULL);
    loom_run_options ro = {.queue_events = true, .ask_user = ask_from_run, .ask_ctx = &v.ask};
    loom_status st;
    /* The run's threads inherit this mask: Ctrl-C stays with this thread. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    loom_run *run = loom_run_start(r->session, goal, &ro, &st);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!run) {
        repl_printf(r, TONE_RED, "%s\n", st.message);
        goto done;
    }
    v.run = run;
    atomic_store(&run_interrupted_ms, 0);
    sigint_seen = 0;
    atomic_store(&active_run, run);
    tty_quiet(true);
    spinner_begin(r->spin, "Thinking\xe2\x80\xa6");
    for (;;) {
        loom_event *ev = NULL;
        int rc = loom_run_next_event(run, &ev, 100);
        if (rc < 0)
            break;
        if (rc == 1) {
            on_event(&v, ev);
            loom_event_free(ev);
        } else {
            /* Only once the queue is drained: the call's header comes first. */
            serve_question(&v);
        }
    }
    flush_text(&v);
    spinner_end(r->spin);
    loom_run_wait(run);
    show_outcome(&v, loom_run_result_json(run));
    atomic_store(&active_run, NULL);
    tty_quiet(false);
    loom_run_free(run);
done:
    for (size_t i = 0; i < v.n_calls; i++) {
        free(v.calls[i].id);
        free(v.calls[i].header);
    }
    free(v.calls);
    render_stream_free(v.md);
    pthread_mutex_destroy(&v.ask.m);
    pthread_cond_destroy(&v.ask.c);
    term_write(r, "\n", 1);
}

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
    const char *label = mode_label(loom_session_permission_mode(r->session));
    if (label)
        repl_printf(r, TONE_YELLOW, "%s\n", label);
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
    if (s[0] == '!')
        repl_run_shell(r, s + 1);
    else if (slash_is_memory_line(s))
        slash_remember(r, s + 1);
    else if (s[0] == '/' && s[1] != '/')
        slash_run(r, s);
    else
        run_prompt(r, s[0] == '/' ? s + 1 : s); /* "//x" sends "/x" */
}

int repl_main(const cli_options *opt)
{
    pick_locale();
    repl r;
    memset(&r, 0, sizeof r);
    r.opt = *opt;
    const char *no_color = getenv("NO_COLOR");
    r.color = isatty(STDOUT_FILENO) && !(no_color && *no_color);
    r.cost_usd = -1;
    pthread_mutex_init(&r.term, NULL);

    loom_status st;
    loom_config *cfg = setup_config(opt, true, NULL, &st);
    if (cfg) /* before the agent: nothing the folder's settings say has counted yet */
        cfg = trust_prompt_ask(opt, cfg, &st);
    if (cfg)
        r.agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    if (r.agent)
        r.session = setup_session(opt, r.agent, &st);
    if (!r.session) {
        fprintf(stderr, "loom: %s\n", st.message);
        int status = r.agent && (opt->resume || opt->continue_latest) ? 1 : 2;
        loom_agent_free(r.agent);
        pthread_mutex_destroy(&r.term);
        return status;
    }
    r.cwd = absolute_cwd(opt->cwd);
    r.spin = spinner_new(stderr, &r.term, r.color);
    repl_header(&r);
    for (size_t i = 0; i < loom_session_warning_count(r.session); i++)
        repl_printf(&r, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", loom_session_warning(r.session, i));
    const char *mode_note = trust_prompt_mode_notice(loom_session_permission_mode(r.session));
    if (mode_note)
        repl_printf(&r, TONE_YELLOW, "\xe2\x9a\xa0 %s\n", mode_note);
    if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tty_orig) == 0)
        tty_orig_ok = 1;
    editor_open(&r);
    install_signals();

    if (opt->prompt) {
        /* `loom "prompt"`: the first message comes from the command line. */
        char *first = xstrdup(opt->prompt);
        repl_printf(&r, TONE_BOLD, PROMPT "%s\n", first);
        submit(&r, first);
        free(first);
    }
    while (!r.quit && !terminate_seen) {
        show_mode(&r);
        char *line = read_input(&r);
        if (!line)
            break;
        submit(&r, line);
        free(line);
    }

    if (!terminate_seen)
        fputs("\n", stdout);
    fflush(stdout);
    editor_close(&r);
    str_free(&typeahead);
    spinner_free(r.spin);
    loom_session_free(r.session);
    loom_agent_free(r.agent);
    free(r.model);
    free(r.cwd);
    pthread_mutex_destroy(&r.term);
    return 0;
}
