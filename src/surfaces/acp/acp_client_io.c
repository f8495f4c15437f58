/* acp_client_io.c — the client's files and terminal as the run's I/O port
 * (loom.h's loom_io_port; docs/acp.md "Files and terminals").
 *
 * When initialize's clientCapabilities offer fs.readTextFile and
 * fs.writeTextFile, Read, Write and Edit read and write through
 * fs/read_text_file and fs/write_text_file (the editor's buffers, unsaved
 * text included); when they offer terminal, Bash runs through
 * terminal/create, wait_for_exit, output and release, and the terminal is
 * embedded in the call's tool_call_update. Loom's pipeline has already
 * decided each call before it gets here.
 *
 * Each request waits at most the client timeout (wait_for_exit: the
 * command's own timeout) and polls the run's cancel; a cancelled or timed
 * out command is killed, its output taken and its terminal released. Every
 * answer is checked (acp_client_reply.c) and a bad one is the tool's error.
 *
 * The texts last read or written through the client are kept per session
 * (under srv->mu), so an edit's diff shows the buffer's text, not the
 * disk's (acp_map.c's text hook); and the terminal of each call, so its
 * finished update keeps showing it. Called on the run's thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/acp/acp_server_int.h"

#define ACP_TEXTS_MAX 64                 /* texts kept per session, oldest dropped */
#define ACP_TEXT_KEEP ((size_t)4 << 20)  /* bigger texts are not kept (no diff) */
#define ACP_TERMS_MAX 256

static long client_timeout(const acp_server *srv)
{
    return srv->opt.client_timeout_ms > 0 ? srv->opt.client_timeout_ms
                                          : ACP_CLIENT_TIMEOUT_DEFAULT_MS;
}

/* ---- what the client said, kept for the updates ------------------------------------- */

static void keep_text(acp_sess *ss, const char *path, const char *text, size_t len)
{
    acp_server *srv = ss->srv;
    pthread_mutex_lock(&srv->mu);
    size_t i = 0;
    while (i < ss->n_texts && strcmp(ss->texts[i].path, path) != 0)
        i++;
    if (i < ss->n_texts) { /* replaced below, or dropped when too big */
        free(ss->texts[i].path);
        free(ss->texts[i].text);
        memmove(&ss->texts[i], &ss->texts[i + 1], (ss->n_texts - i - 1) * sizeof *ss->texts);
        ss->n_texts--;
    }
    if (len <= ACP_TEXT_KEEP && !memchr(text, '\0', len)) {
        if (ss->n_texts == ACP_TEXTS_MAX) {
            free(ss->texts[0].path);
            free(ss->texts[0].text);
            memmove(&ss->texts[0], &ss->texts[1], (ss->n_texts - 1) * sizeof *ss->texts);
            ss->n_texts--;
        }
        if (!ss->texts)
            ss->texts = xcalloc(ACP_TEXTS_MAX, sizeof *ss->texts);
        ss->texts[ss->n_texts++] = (acp_text){xstrdup(path), xstrndup(text, len)};
    }
    pthread_mutex_unlock(&srv->mu);
}

char *acp_client_text(void *ctx, const char *path, bool *known)
{
    acp_sess *ss = ctx;
    *known = false;
    char *copy = NULL;
    pthread_mutex_lock(&ss->srv->mu);
    for (size_t i = 0; path && i < ss->n_texts; i++)
        if (strcmp(ss->texts[i].path, path) == 0) {
            copy = xstrdup(ss->texts[i].text);
            *known = true;
            break;
        }
    pthread_mutex_unlock(&ss->srv->mu);
    return copy;
}

static void keep_terminal(acp_sess *ss, const char *call_id, const char *terminal_id)
{
    if (!call_id)
        return;
    pthread_mutex_lock(&ss->srv->mu);
    if (ss->n_terms == ACP_TERMS_MAX) {
        free(ss->terms[0].call_id);
        free(ss->terms[0].terminal_id);
        memmove(&ss->terms[0], &ss->terms[1], (ss->n_terms - 1) * sizeof *ss->terms);
        ss->n_terms--;
    }
    if (!ss->terms)
        ss->terms = xcalloc(ACP_TERMS_MAX, sizeof *ss->terms);
    ss->terms[ss->n_terms++] = (acp_term){xstrdup(call_id), xstrdup(terminal_id)};
    pthread_mutex_unlock(&ss->srv->mu);
}

char *acp_client_terminal(void *ctx, const char *call_id)
{
    acp_sess *ss = ctx;
    char *id = NULL;
    pthread_mutex_lock(&ss->srv->mu);
    for (size_t i = ss->n_terms; call_id && i-- > 0;)
        if (strcmp(ss->terms[i].call_id, call_id) == 0) {
            id = xstrdup(ss->terms[i].terminal_id);
            break;
        }
    pthread_mutex_unlock(&ss->srv->mu);
    return id;
}

void acp_client_io_free(acp_sess *ss)
{
    for (size_t i = 0; i < ss->n_texts; i++) {
        free(ss->texts[i].path);
        free(ss->texts[i].text);
    }
    for (size_t i = 0; i < ss->n_terms; i++) {
        free(ss->terms[i].call_id);
        free(ss->terms[i].terminal_id);
    }
    free(ss->texts);
    free(ss->terms);
    ss->texts = NULL;
    ss->terms = NULL;
    ss->n_texts = ss->n_terms = 0;
}

/* ---- one request ---------------------------------------------------------------------- */

/* Why a request brought no usable result, for the model (malloc'd). */
static char *no_result(acp_server *srv, const char *method, acp_reply_kind k, const json_t *error)
{
    char text[600];
    switch (k) {
    case ACP_REPLY_ERROR:
        acp_reply_error_text(method, error, text, sizeof text);
        break;
    case ACP_REPLY_TIMEOUT:
        snprintf(text, sizeof text, "the client did not answer %s within %.1f s", method,
                 client_timeout(srv) / 1000.0);
        break;
    case ACP_REPLY_STOPPED:
        snprintf(text, sizeof text, "the run was cancelled while waiting for %s", method);
        break;
    default:
        snprintf(text, sizeof text, "the prompt was cancelled, or the client left, before it "
                                    "answered %s", method);
        break;
    }
    return xstrdup(text);
}

static bool run_cancelled(void *ctx)
{
    const loom_io_command *cmd = ctx;
    return cmd->stop_requested && cmd->stop_requested(cmd->stop_ctx);
}

/* ---- fs --------------------------------------------------------------------------------- */

static char *read_text(void *ctx, const char *path, size_t *len, char **error)
{
    acp_sess *ss = ctx;
    acp_server *srv = ss->srv;
    acp_call_opts o = {.deadline_ms = client_timeout(srv)};
    json_t *result, *err;
    acp_reply_kind k = acp_call_client(srv, ss, "fs/read_text_file",
                                       json_pack("{s:s, s:s}", "sessionId", ss->id, "path", path),
                                       &o, &result, &err);
    char *out = NULL;
    if (k != ACP_REPLY_RESULT) {
        *error = no_result(srv, "fs/read_text_file", k, err);
    } else {
        char why[300];
        const char *text;
        if (acp_reply_read_text(result, &text, len, why, sizeof why) != 0) {
            *error = xstrdup(why);
        } else {
            out = xmalloc(*len + 1);
            memcpy(out, text, *len);
            out[*len] = '\0';
            keep_text(ss, path, text, *len);
        }
    }
    json_decref(result);
    json_decref(err);
    return out;
}

static int write_text(void *ctx, const char *path, const char *text, size_t len, char **error)
{
    acp_sess *ss = ctx;
    acp_server *srv = ss->srv;
    json_t *content = json_stringn(text, len);
    if (!content) {
        *error = xstrdup("the new text is not valid UTF-8, which fs/write_text_file cannot "
                         "carry");
        return -1;
    }
    acp_call_opts o = {.deadline_ms = client_timeout(srv)};
    json_t *result, *err;
    acp_reply_kind k = acp_call_client(
        srv, ss, "fs/write_text_file",
        json_pack("{s:s, s:s, s:o}", "sessionId", ss->id, "path", path, "content", content), &o,
        &result, &err);
    int rc = -1;
    char why[300];
    if (k != ACP_REPLY_RESULT)
        *error = no_result(srv, "fs/write_text_file", k, err);
    else if (acp_reply_empty("fs/write_text_file", result, why, sizeof why) != 0)
        *error = xstrdup(why);
    else {
        keep_text(ss, path, text, len);
        rc = 0;
    }
    json_decref(result);
    json_decref(err);
    return rc;
}

/* ---- terminal ---------------------------------------------------------------------------- */

/* A clean-up request (kill, release): sent even after a cancel, answered
 * or not within the client timeout; the answer is checked, then dropped. */
static void term_call(acp_sess *ss, const char *method, const char *terminal_id)
{
    acp_call_opts o = {.deadline_ms = client_timeout(ss->srv), .after_cancel = true};
    json_t *result, *err;
    acp_reply_kind k = acp_call_client(
        ss->srv, ss, method,
        json_pack("{s:s, s:s}", "sessionId", ss->id, "terminalId", terminal_id), &o, &result,
        &err);
    char why[300] = "";
    if (k != ACP_REPLY_RESULT) {
        char *text = no_result(ss->srv, method, k, err);
        fprintf(stderr, "loom-acp: %s\n", text);
        free(text);
    } else if (acp_reply_empty(method, result, why, sizeof why) != 0) {
        fprintf(stderr, "loom-acp: %s\n", why);
    }
    json_decref(result);
    json_decref(err);
}

static void copy_exit(loom_io_outcome *out, const acp_exit *e)
{
    out->exit_code = e->exit_code;
    free(out->signal);
    out->signal = e->signal[0] ? xstrdup(e->signal) : NULL;
}

/* terminal/output after the command ended or was killed: its output, and
 * its exit status when wait_for_exit gave none. 0, or -1 with *error. */
static int take_output(acp_sess *ss, const char *terminal_id, bool need_exit,
                       loom_io_outcome *out, char **error)
{
    acp_call_opts o = {.deadline_ms = client_timeout(ss->srv), .after_cancel = true};
    json_t *result, *err;
    acp_reply_kind k = acp_call_client(
        ss->srv, ss, "terminal/output",
        json_pack("{s:s, s:s}", "sessionId", ss->id, "terminalId", terminal_id), &o, &result,
        &err);
    int rc = -1;
    acp_term_output t;
    char why[300];
    if (k != ACP_REPLY_RESULT) {
        *error = no_result(ss->srv, "terminal/output", k, err);
    } else if (acp_reply_terminal_output(result, &t, why, sizeof why) != 0) {
        *error = xstrdup(why);
    } else {
        out->output = xstrndup(t.output, t.output_len);
        out->truncated = t.truncated;
        if (need_exit && t.exit.known)
            copy_exit(out, &t.exit);
        rc = 0;
    }
    json_decref(result);
    json_decref(err);
    return rc;
}

/* Shows the terminal in the Bash call's tool call: the protocol asks that
 * it be embedded before it is released. */
static void embed_terminal(acp_sess *ss, const char *call_id, const char *terminal_id)
{
    if (!call_id)
        return;
    keep_terminal(ss, call_id, terminal_id);
    acp_send_update(ss->srv, ss->id,
                    json_pack("{s:s, s:s, s:s, s:[{s:s, s:s}]}", "sessionUpdate",
                              "tool_call_update", "toolCallId", call_id, "status", "in_progress",
                              "content", "type", "terminal", "terminalId", terminal_id));
}

static int run_command(void *ctx, const loom_io_command *cmd, loom_io_outcome *out, char **error)
{
    acp_sess *ss = ctx;
    acp_server *srv = ss->srv;
    json_t *params = json_pack("{s:s, s:s, s:[s, s], s:[], s:s, s:I}", "sessionId", ss->id,
                               "command", "bash", "args", "-c", cmd->command, "env", "cwd",
                               cmd->cwd, "outputByteLimit", (json_int_t)cmd->output_limit);
    if (!params) {
        *error = xstrdup("the command is not valid UTF-8, which terminal/create cannot carry");
        return -1;
    }
    acp_call_opts o = {.deadline_ms = client_timeout(srv), .stop = run_cancelled,
                       .stop_ctx = (void *)cmd};
    json_t *result, *err;
    acp_reply_kind k = acp_call_client(srv, ss, "terminal/create", params, &o, &result, &err);
    char why[300];
    const char *tid = NULL;
    if (k != ACP_REPLY_RESULT)
        *error = no_result(srv, "terminal/create", k, err);
    else if (acp_reply_terminal_id(result, &tid, why, sizeof why) != 0)
        *error = xstrdup(why);
    char *terminal_id = tid ? xstrdup(tid) : NULL;
    json_decref(result);
    json_decref(err);
    if (!terminal_id)
        return -1;
    embed_terminal(ss, cmd->call_id, terminal_id);

    /* The command's own deadline: the client runs it, Loom keeps the time. */
    o = (acp_call_opts){.deadline_ms = cmd->timeout_ms, .stop = run_cancelled,
                        .stop_ctx = (void *)cmd};
    k = acp_call_client(srv, ss, "terminal/wait_for_exit",
                        json_pack("{s:s, s:s}", "sessionId", ss->id, "terminalId", terminal_id),
                        &o, &result, &err);
    acp_exit ex = {.exit_code = -1};
    char *failed = NULL;
    if (k == ACP_REPLY_RESULT) {
        if (acp_reply_exit_status("terminal/wait_for_exit", result, &ex, why, sizeof why) != 0)
            failed = xstrdup(why);
    } else if (k == ACP_REPLY_TIMEOUT) {
        out->timed_out = true;
    } else if (k == ACP_REPLY_STOPPED || k == ACP_REPLY_GONE) {
        out->cancelled = true;
    } else {
        failed = no_result(srv, "terminal/wait_for_exit", k, err);
    }
    json_decref(result);
    json_decref(err);
    if (!ex.known)
        term_call(ss, "terminal/kill", terminal_id);
    else
        copy_exit(out, &ex);
    int rc = 0;
    char *output_error = NULL;
    if (take_output(ss, terminal_id, !ex.known && !failed, out, &output_error) != 0 && !failed) {
        failed = output_error;
        output_error = NULL;
    }
    free(output_error);
    term_call(ss, "terminal/release", terminal_id);
    free(terminal_id);
    if (failed) {
        *error = failed;
        rc = -1;
    }
    return rc;
}

/* ---- the port ------------------------------------------------------------------------------- */

const loom_io_port *acp_client_io(acp_sess *ss)
{
    acp_server *srv = ss->srv;
    pthread_mutex_lock(&srv->mu);
    const json_t *fs = json_get_obj(srv->client_caps, "fs");
    bool files = json_is_true(json_object_get(fs, "readTextFile")) &&
                 json_is_true(json_object_get(fs, "writeTextFile"));
    bool terminal = json_is_true(json_object_get(srv->client_caps, "terminal"));
    pthread_mutex_unlock(&srv->mu);
    ss->io = (loom_io_port){.ctx = ss};
    if (files) {
        ss->io.read_text = read_text;
        ss->io.write_text = write_text;
    }
    if (terminal)
        ss->io.run_command = run_command;
    return files || terminal ? &ss->io : NULL;
}
