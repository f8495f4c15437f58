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
 * exits at once. SIGUSR1/SIGUSR2/SIGHUP reach the heartbeat as events. */
#include "surfaces/cli/print_mode.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/json.h"
#include "base/log.h"
#include "base/sig.h"
#include "base/str.h"
#include "loom.h"
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

static char *read_stdin_prompt(void)
{
    if (isatty(STDIN_FILENO))
        return NULL;
    loom_str s = LOOM_STR_INIT;
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
        str_append(&s, buf, n);
    while (s.len && (s.ptr[s.len - 1] == '\n' || s.ptr[s.len - 1] == '\r'))
        s.ptr[--s.len] = '\0';
    if (!s.len) {
        str_free(&s);
        return NULL;
    }
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

int print_mode_run(const cli_options *opt)
{
    cli_output out = {.format = opt->format, .verbose = opt->verbose};
    output_begin(&out);
    char *prompt = opt->prompt ? xstrdup(opt->prompt) : read_stdin_prompt();
    if (!prompt) {
        fprintf(stderr, "loom: -p needs a prompt: loom -p \"…\" or pipe one on stdin\n");
        return 2;
    }
    loom_status st;
    int status = 2;
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

    install_signals();
    loom_run_options ro = {.on_event = on_event, .event_ctx = &out};
    loom_run *run = loom_run_start(session, prompt, &ro, &st);
    if (!run) {
        output_setup_error(&out, &st);
    } else {
        atomic_store(&active_run, run);
        loom_run_wait(run);
        atomic_store(&active_run, NULL);
        output_end(&out, run);
        status = exit_status(run);
        loom_run_free(run);
    }
    loom_session_free(session);
    loom_agent_free(agent);
    free(prompt);
    log_process_stats();
    return status;
}
