/* print_mode.c — `loom -p`: send one prompt through the configured provider,
 * stream the reply, and keep the exchange as a session on disk.
 *
 * Order of writes is what makes a crash harmless: the user record is
 * appended before the model is called, the reply's records only after the
 * whole reply arrived, then one fsync. A kill at any point leaves whole
 * records; a failed call leaves the prompt and no half reply. */
#include "surfaces/cli/print_mode.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/cancel.h"
#include "base/log.h"
#include "base/uuid.h"
#include "session/history.h"
#include "session/record.h"
#include "session/store.h"
#include "session/transcript.h"
#include "surfaces/cli/output.h"
#include "wire/provider.h"

static loom_cancel interrupted;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&interrupted, 1);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static void sink_text(void *ctx, const char *d, size_t n) { output_text(ctx, d, n); }
static void sink_thinking(void *ctx, const char *d, size_t n) { output_thinking(ctx, d, n); }
static void sink_retry(void *ctx, int attempt, double delay, const loom_error *why)
{
    output_retry(ctx, attempt, delay, why);
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

static int config_from_options(const cli_options *opt, provider_config *cfg, loom_error *err)
{
    provider_config_init(cfg);
    if (opt->provider && provider_kind_parse(opt->provider, &cfg->kind) != 0)
        return loom_error_set(err, LOOM_ERR_CONFIG,
                              "--provider %s is not a provider (anthropic, openai, "
                              "openai-responses, replay)", opt->provider);
    cfg->model = xstrdup(opt->model);
    cfg->base_url = xstrdup(opt->base_url);
    cfg->cassette = xstrdup(opt->cassette);
    cfg->max_retries = opt->max_retries;
    cfg->stream = !opt->no_stream;
    return provider_config_resolve(cfg, err);
}

/* Opens the session the options name, or creates a new one for cwd. */
static transcript *open_session(const cli_options *opt, const provider_config *cfg,
                                const char *cwd, loom_error *err)
{
    char *dir = store_project_dir(cwd);
    transcript *t = NULL;
    if (opt->resume || opt->continue_latest) {
        char *path = NULL;
        int rc = opt->resume ? session_find(opt->resume, &path, err)
                             : session_latest(cwd, &path, err);
        if (rc == 0) {
            t = transcript_open(path, err);
            free(path);
        }
        if (t && opt->fork_session) {
            transcript *fork = transcript_fork(t, dir, err);
            transcript_free(t);
            t = fork;
        }
    } else {
        t = transcript_create(dir, cwd, provider_kind_name(cfg->kind), cfg->model, err);
    }
    free(dir);
    return t;
}

static int build_request(transcript *t, const provider_config *cfg, const cli_options *opt,
                         wire_request *req, loom_error *err)
{
    memset(req, 0, sizeof *req);
    req->model = xstrdup(cfg->model);
    req->system = xstrdup(opt->system_prompt);
    req->system_cache = true;
    req->max_tokens = cfg->max_output_tokens;
    req->temperature = -1;
    req->stream = cfg->stream;
    if (history_from_transcript(t, req, NULL) != 0)
        return loom_error_set(err, LOOM_ERR_SESSION_CORRUPT,
                              "session %s: the conversation could not be rebuilt",
                              transcript_session_id(t));
    return 0;
}

int print_mode_run(const cli_options *opt)
{
    loom_error err;
    loom_error_clear(&err);
    char *prompt = opt->prompt ? xstrdup(opt->prompt) : read_stdin_prompt();
    if (!prompt) {
        fprintf(stderr, "loom: -p needs a prompt: loom -p \"…\" or pipe one on stdin\n");
        return 2;
    }
    provider_config cfg;
    if (config_from_options(opt, &cfg, &err) != 0) {
        fprintf(stderr, "loom: %s\n", err.message);
        provider_config_free(&cfg);
        free(prompt);
        return 2;
    }
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        strcpy(cwd, "/");

    transcript *t = open_session(opt, &cfg, cwd, &err);
    if (!t) {
        fprintf(stderr, "loom: %s\n", err.message);
        provider_config_free(&cfg);
        free(prompt);
        return opt->resume || opt->continue_latest ? 1 : 2;
    }

    char run_id[UUID_STR_LEN];
    uuid_v7(run_id);
    cli_output out = {
        .format = opt->format,
        .run_id = run_id,
        .session_id = transcript_session_id(t),
        .model = cfg.model,
        .provider = provider_kind_name(cfg.kind),
    };
    output_begin(&out);
    for (size_t i = 0; i < transcript_n_warnings(t); i++)
        output_warning(&out, transcript_warning(t, i));

    int status = 1;
    wire_request req;
    wire_response resp = {0};
    install_signals();
    if (transcript_append_new(t, record_user_text(prompt), &err) != 0 ||
        transcript_sync(t, &err) != 0 || build_request(t, &cfg, opt, &req, &err) != 0) {
        output_failure(&out, &err);
        goto done_session;
    }
    wire_stream_sink sink = {
        .ctx = &out, .on_text = sink_text, .on_thinking = sink_thinking, .on_retry = sink_retry,
    };
    int rc = provider_complete(&cfg, &req, &sink, &interrupted, &resp, &err);
    wire_request_free(&req);
    if (rc != 0) {
        output_failure(&out, &err);
        status = err.code == LOOM_ERR_RUN_CANCELLED ? 130 : 1;
        goto done_session;
    }
    json_t *records = record_from_response(&resp, resp.request_id);
    size_t i;
    json_t *rec;
    json_array_foreach(records, i, rec) {
        if (transcript_append(t, rec, &err) != 0)
            break;
    }
    json_decref(records);
    if (err.code == LOOM_OK)
        transcript_sync(t, &err);
    if (err.code != LOOM_OK) {
        output_failure(&out, &err);
        goto done_session;
    }
    output_success(&out, &resp);
    status = 0;

done_session:
    wire_response_free(&resp);
    output_free(&out);
    transcript_free(t);
    provider_config_free(&cfg);
    free(prompt);
    return status;
}
