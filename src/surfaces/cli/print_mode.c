/* print_mode.c — `loom -p`: one goal, carried out headless through loom.h.
 *
 * Exit status (docs/cli.md): 0 the run completed; 1 it failed (model or
 * session error); 2 a usage or configuration error before any run; 3 it
 * stopped at a limit (--max-turns, token or cost budget) and can be
 * resumed (also after an external signal the heartbeat reported); 130
 * interrupted. The first SIGINT/SIGTERM cancels the run (the model stream
 * or running tool stops, the session records the interruption) — or, with
 * a heartbeat watching external signals, becomes a critical event that
 * stops the run resumable with the event as the reason; a second one
 * exits at once. SIGUSR1/SIGUSR2/SIGHUP reach the heartbeat as events.
 *
 * The prompt: the argument, with piped stdin appended after a blank line
 * (`git diff | loom -p "review this"`, as Claude Code joins them); with no
 * argument, stdin is the prompt. --input-format stream-json reads user
 * messages from stdin instead, each line a run on the same session, until
 * EOF (input_stream.h). Runs on the main thread; the signal handler only
 * reaches the active run through an atomic. */
#include "surfaces/cli/print_mode.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/json.h"
#include "base/log.h"
#include "base/sig.h"
#include "base/str.h"
#include "loom.h"
#include "surfaces/cli/input_stream.h"
#include "surfaces/cli/output.h"
#include "surfaces/cli/setup.h"
#include "surfaces/cli/trust_prompt.h"

static loom_run *_Atomic active_run;
static atomic_int signals_seen;

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGUSR1: return "SIGUSR1";
    case SIGUSR2: return "SIGUSR2";
    default: return "SIGHUP";
    }
}

/* With a heartbeat taking signals, a signal becomes an external_signal
 * event (SIGINT/SIGTERM end the run with it as the reason); without one,
 * SIGINT/SIGTERM cancel the run and the others are ignored. */
static void on_signal(int sig)
{
    bool stops = sig == SIGINT || sig == SIGTERM;
    if (stops && atomic_fetch_add(&signals_seen, 1) > 0)
        _exit(130);
    loom_run *r = atomic_load(&active_run);
    if (r && loom_run_signal(r, signal_name(sig)) != 0 && stops)
        loom_run_cancel(r);
}

static void install_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP};
    sig_set(sigs, sizeof sigs / sizeof *sigs, on_signal, 0);
}

/* Piped input beyond this is refused: a prompt, not a data set. */
#define STDIN_PROMPT_MAX (10u * 1024u * 1024u)
/* With a prompt argument, how long a pipe may stay silent before loom goes
 * on without it (a script's stdin left open, never written). */
#define STDIN_FIRST_BYTE_MS 3000

/* stdin when it is piped or redirected: NULL when it is a terminal or
 * empty, or (with a prompt argument) a pipe that gives nothing at all
 * within STDIN_FIRST_BYTE_MS. *too_big when it holds more than the cap. */
static char *read_stdin_text(bool have_prompt, bool *too_big)
{
    *too_big = false;
    if (isatty(STDIN_FILENO))
        return NULL;
    struct stat sb;
    if (have_prompt && fstat(STDIN_FILENO, &sb) == 0 &&
        (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode))) {
        struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
        int rc;
        do
            rc = poll(&pfd, 1, STDIN_FIRST_BYTE_MS);
        while (rc < 0 && errno == EINTR);
        if (rc == 0) {
            fprintf(stderr, "loom: stdin gave nothing in %d s; going on with the prompt alone "
                            "(redirect it from /dev/null to skip the wait)\n",
                    STDIN_FIRST_BYTE_MS / 1000);
            return NULL;
        }
    }
    loom_str s = LOOM_STR_INIT;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) {
        if (s.len + n > STDIN_PROMPT_MAX) {
            *too_big = true;
            str_free(&s);
            return NULL;
        }
        str_append(&s, buf, n);
    }
    while (s.len && (s.ptr[s.len - 1] == '\n' || s.ptr[s.len - 1] == '\r'))
        s.ptr[--s.len] = '\0';
    if (!s.len) {
        str_free(&s);
        return NULL;
    }
    return str_steal(&s);
}

/* The prompt of a text-input run: the argument, then stdin after a blank
 * line; or stdin alone. NULL with *status set when there is none. */
static char *build_prompt(const cli_options *opt, int *status)
{
    bool too_big;
    char *piped = read_stdin_text(opt->prompt != NULL, &too_big);
    if (too_big) {
        fprintf(stderr, "loom: stdin holds more than %u MB; a prompt that large is refused "
                        "(give the model a file to read instead)\n",
                STDIN_PROMPT_MAX / (1024u * 1024u));
        *status = 2;
        return NULL;
    }
    if (!opt->prompt) {
        if (!piped) {
            fprintf(stderr, "loom: -p needs a prompt: loom -p \"…\" or pipe one on stdin\n");
            *status = 2;
        }
        return piped;
    }
    loom_str s = LOOM_STR_INIT;
    str_append(&s, opt->prompt, strlen(opt->prompt));
    if (piped) {
        str_append(&s, "\n\n", 2);
        str_append(&s, piped, strlen(piped));
    }
    free(piped);
    return str_steal(&s);
}

static void on_event(void *ctx, const loom_event *ev)
{
    output_event(ctx, ev);
}

/* The harness's own cost, for bench/: CPU of this process only (tools run
 * as children and are not counted) and its peak RSS. */
static void log_process_stats(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return;
    log_event(LOG_INFO, "process",
              json_pack("{s:f,s:f,s:I}", "cpu_user_ms",
                        ru.ru_utime.tv_sec * 1e3 + ru.ru_utime.tv_usec / 1e3, "cpu_sys_ms",
                        ru.ru_stime.tv_sec * 1e3 + ru.ru_stime.tv_usec / 1e3, "max_rss_kb",
                        (json_int_t)ru.ru_maxrss),
              "process stats");
}

static int exit_status(const loom_run *run)
{
    loom_run_state state = loom_run_state_now(run);
    loom_stop_reason stop = loom_run_stop_reason(run);
    if (state == LOOM_RUN_COMPLETED)
        return 0;
    if (state == LOOM_RUN_CANCELLED)
        return 130;
    if (stop == LOOM_STOP_MAX_TURNS || stop == LOOM_STOP_TOKEN_BUDGET ||
        stop == LOOM_STOP_USD_BUDGET || stop == LOOM_STOP_EXTERNAL_SIGNAL)
        return 3; /* stopped by a limit or a signal: resumable */
    return 1;
}

/* One run of prompt on the session, shown as out says; its exit status. */
static int one_run(loom_session *session, const char *prompt, cli_output *out)
{
    loom_status st;
    output_begin(out);
    loom_run_options ro = {.on_event = on_event, .event_ctx = out};
    loom_run *run = loom_run_start(session, prompt, &ro, &st);
    if (!run) {
        output_setup_error(out, &st);
        return 1;
    }
    atomic_store(&active_run, run);
    loom_run_wait(run);
    atomic_store(&active_run, NULL);
    output_end(out, run);
    int status = exit_status(run);
    loom_run_free(run);
    return status;
}

/* One line of stdin into *line (without its newline), held to the cap:
 * the rest of a longer line is read and dropped, and *too_long set. False
 * at EOF with nothing read. */
static bool read_line(loom_str *line, bool *too_long)
{
    str_clear(line);
    *too_long = false;
    int c;
    bool any = false;
    while ((c = getc(stdin)) != EOF) {
        any = true;
        if (c == '\n')
            break;
        if (line->len < INPUT_STREAM_LINE_MAX) {
            char ch = (char)c;
            str_append(line, &ch, 1);
        } else {
            *too_long = true;
        }
    }
    return any;
}

/* --input-format stream-json: every user line a run on the session, in
 * order, until EOF (or a run that was interrupted). The exit status is
 * the last run's; a line that is no message is skipped with a warning. */
static int stream_runs(loom_session *session, cli_output *out)
{
    int status = 0;
    loom_str line = LOOM_STR_INIT;
    bool too_long;
    long lineno = 0;
    bool any = false;
    while (read_line(&line, &too_long)) {
        lineno++;
        char *prompt = NULL, why[200];
        int rc = too_long ? -1 : input_stream_line(line.ptr ? line.ptr : "", line.len, &prompt,
                                                    why, sizeof why);
        if (too_long)
            snprintf(why, sizeof why, "the line is longer than %u MB",
                     INPUT_STREAM_LINE_MAX / (1024u * 1024u));
        if (rc < 0 || (rc > 0 && *why))
            fprintf(stderr, "loom: warning: stdin line %ld: %s%s\n", lineno, why,
                    rc < 0 ? "; skipped" : "");
        if (rc <= 0)
            continue;
        any = true;
        status = one_run(session, prompt, out);
        free(prompt);
        if (status == 130)
            break;
    }
    str_free(&line);
    if (!any) {
        fprintf(stderr, "loom: --input-format stream-json: stdin held no user message\n");
        return 2;
    }
    return status;
}

/* stream-json's init line names the tools and the MCP servers. */
static void describe_session(loom_session *session, cli_output *out)
{
    loom_error ignore;
    char *tools = loom_session_tools_json(session);
    out->tools = tools ? json_parse(tools, strlen(tools), "tools", &ignore) : NULL;
    free(tools);
    char *mcp = loom_session_mcp_status_json(session);
    json_t *servers = mcp ? json_parse(mcp, strlen(mcp), "mcp", &ignore) : NULL;
    free(mcp);
    out->mcp_servers = json_array();
    size_t i;
    json_t *srv;
    json_array_foreach(servers, i, srv) {
        json_array_append_new(out->mcp_servers,
                              json_pack("{s:s,s:s}", "name", json_get_str(srv, "name", "?"),
                                        "status", json_get_str(srv, "state", "?")));
    }
    json_decref(servers);
}

int print_mode_run(const cli_options *opt)
{
    cli_output out = {.format = opt->format, .verbose = opt->verbose};
    output_begin(&out);
    int status = 2;
    char *prompt = NULL;
    if (opt->input == INPUT_TEXT && !(prompt = build_prompt(opt, &status)))
        return status;
    loom_status st;
    loom_session *session = NULL;
    loom_agent *agent = NULL;
    loom_config *cfg = setup_config(opt, false, NULL, &st);
    if (cfg)
        agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    if (agent) {
        session = setup_session(opt, agent, &st);
        status = 1; /* an unknown session is not a usage error */
    }
    if (!session) {
        output_setup_error(&out, &st);
        output_free(&out);
        loom_agent_free(agent);
        free(prompt);
        return agent && (opt->resume || opt->continue_latest) ? 1 : 2;
    }
    out.model = loom_agent_model(agent);
    out.provider = loom_agent_provider(agent);
    for (size_t i = 0; i < loom_session_warning_count(session); i++)
        output_warning(&out, loom_session_warning(session, i));
    /* Headless, only the modes that skip questions need saying. */
    const char *mode = loom_session_permission_mode(session);
    if (!strcmp(mode, "bypassPermissions") || !strcmp(mode, "fullAccess"))
        output_warning(&out, trust_prompt_mode_notice(mode));
    if (opt->format == OUTPUT_STREAM_JSON)
        describe_session(session, &out);

    install_signals();
    status = prompt ? one_run(session, prompt, &out) : stream_runs(session, &out);
    output_free(&out);
    loom_session_free(session);
    loom_agent_free(agent);
    free(prompt);
    log_process_stats();
    return status;
}
