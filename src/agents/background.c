/* background.c — sub-agents that run on their own thread: run_in_background,
 * an agent file's `background: true`, and a finished agent resumed by
 * SendMessage.
 *
 * A background agent is an external task of the task registry its parent's
 * call ran with (tools/tasks.h), under its own id ("agent_3"), so TaskOutput
 * and TaskStop work on it as on a shell. Its thread runs agent_execute and
 * then agent_release; when the run ends its final message is written to an
 * output file beside its sidechain and a <task-notification> note is posted
 * to the parent's inbox, which the parent's loop takes at its next turn
 * boundary (loop_tree_port.take_notes). A headless root run does not end
 * while its background agents still run (agent_bg_before_final waits for
 * them); an interactive one leaves them to the session.
 *
 * Owner rule: the bg state of a node (node->bg) lives until
 * agent_bg_join_all, at the session's end; the task registry's release op
 * therefore frees nothing. Threading: the state's fields are under its own
 * mutex; one thread per execute, joined before the next one starts (a
 * resume) or at the session's end.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/runner.h"
#include "agents/tree.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/log.h"
#include "base/str.h"
#include "governance/governance.h"
#include "tools/tasks.h"

/* How long TaskStop waits for a cancelled agent to wind down (its loop sees
 * the flag at the next turn boundary; its tools see it at once). */
#define AGENT_BG_STOP_WAIT_MS 10000
/* The cancel flag is polled at least this often while waiting. */
#define AGENT_BG_WAIT_SLICE_MS 50

typedef struct agent_bg {
    spawn_node *node;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool has_thread;        /* a thread was started and not joined yet */
    bool running;           /* its execute has not ended */
    bool registered;        /* listed in a task registry */
    char *prompt;           /* this execute's user text */
    char *output_path;      /* <mf_dir>/subagents/<id>.output */
    loom_str output;        /* what TaskOutput shows: each execute's result */
    uint64_t read_mark;
    int64_t started_ms, ended_ms;
    spawn_state end_state;
} agent_bg;

static agent_bg *bg_new(spawn_node *n)
{
    agent_bg *bg = xcalloc(1, sizeof *bg);
    bg->node = n;
    pthread_mutex_init(&bg->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&bg->cv, &ca);
    pthread_condattr_destroy(&ca);
    bg->output = (loom_str)LOOM_STR_INIT;
    loom_str p = LOOM_STR_INIT;
    str_printf(&p, "%s/subagents/%s.output", n->session->mf_dir ? n->session->mf_dir : ".",
               n->id);
    bg->output_path = str_steal(&p);
    return bg;
}

static void bg_free(agent_bg *bg)
{
    pthread_mutex_destroy(&bg->mu);
    pthread_cond_destroy(&bg->cv);
    free(bg->prompt);
    free(bg->output_path);
    str_free(&bg->output);
    free(bg);
}

/* --- the thread ------------------------------------------------------------ */

/* The note the parent's model gets when a background agent ends (the shape
 * Claude Code's users' prompts already know: a <task-notification>). */
static char *completion_note(const agent_bg *bg, const agent_outcome *o)
{
    const spawn_node *n = bg->node;
    const char *status = o->state == LOOM_RUN_CANCELLED ? "killed"
                         : o->state == LOOM_RUN_FAILED && !o->partial ? "failed"
                         : o->partial ? "partial"
                                      : "completed";
    loom_str s = LOOM_STR_INIT;
    str_printf(&s,
               "<task-notification>\n<task-id>%s</task-id>\n<status>%s</status>\n"
               "<summary>Agent \"%s\" (%s) %s after %d turns and %d tool uses</summary>\n",
               n->id, status, spawn_node_label(n), n->type ? n->type : "agent", status, o->turns,
               o->tool_uses);
    if (o->partial || o->state != LOOM_RUN_COMPLETED)
        str_printf(&s, "<stop-reason>%s</stop-reason>\n", loom_stop_reason_name(o->stop_reason));
    if (o->error && o->state == LOOM_RUN_FAILED)
        str_printf(&s, "<error>%s</error>\n", o->error);
    /* The whole result is in the output file; the note keeps the parent's
     * context from taking a sub-agent's essay at every completion. */
    const char *text = o->final_text ? o->final_text : "";
    size_t len = strlen(text), keep = len > 8000 ? 8000 : len;
    while (keep < len && keep > 0 && ((unsigned char)text[keep] & 0xC0) == 0x80)
        keep--;
    str_puts(&s, "<result>");
    str_append(&s, text, keep);
    if (keep < len)
        str_printf(&s, "\n[… %zu more bytes in the output file]", len - keep);
    str_printf(&s, "</result>\n<output-file>%s</output-file>\n</task-notification>",
               bg->output_path);
    return str_steal(&s);
}

static void write_output_file(agent_bg *bg)
{
    pthread_mutex_lock(&bg->mu);
    loom_error err;
    if (file_write_atomic(bg->output_path, bg->output.ptr ? bg->output.ptr : "", bg->output.len,
                          0600, &err) != 0)
        LOG_W("agents", "agent %s: output file: %s", bg->node->id, err.message);
    pthread_mutex_unlock(&bg->mu);
}

static void *bg_main(void *arg)
{
    agent_bg *bg = arg;
    spawn_node *n = bg->node;
    agent_outcome o;
    agent_execute(n, bg->prompt, &o);
    agent_release(n);
    pthread_mutex_lock(&bg->mu);
    if (bg->output.len)
        str_puts(&bg->output, "\n\n");
    str_puts(&bg->output, o.final_text ? o.final_text : o.error ? o.error : "");
    pthread_mutex_unlock(&bg->mu);
    write_output_file(bg);
    char *note = completion_note(bg, &o);
    /* The parent learns at its next turn boundary; a root whose run ended
     * hands it to the session's next run (tree.c). */
    if (n->parent)
        spawn_node_post_note(n->parent, note);
    free(note);
    agent_outcome_free(&o);
    pthread_mutex_lock(&bg->mu);
    bg->running = false;
    bg->ended_ms = clock_wall_ms();
    bg->end_state = spawn_node_state(n);
    pthread_cond_broadcast(&bg->cv);
    pthread_mutex_unlock(&bg->mu);
    return NULL;
}

/* Starts bg's thread for prompt; the previous thread (a resume) is joined
 * first. Claiming `running` before anything else makes two resumes of one
 * agent at once start one run: the other gets EBUSY. 0, or an errno. */
static int bg_launch(agent_bg *bg, const char *prompt, bool counted)
{
    pthread_mutex_lock(&bg->mu);
    if (bg->running) {
        pthread_mutex_unlock(&bg->mu);
        return EBUSY;
    }
    bg->running = true;
    bool join = bg->has_thread;
    pthread_t old = bg->thread;
    bg->has_thread = false;
    pthread_mutex_unlock(&bg->mu);
    if (join)
        pthread_join(old, NULL);
    pthread_mutex_lock(&bg->mu);
    free(bg->prompt);
    bg->prompt = xstrdup(prompt);
    bg->started_ms = clock_wall_ms();
    bg->ended_ms = 0;
    /* The caller's slot passes to the run (its release gives it back). */
    if (counted && bg->node->res)
        bg->node->res->counted = true;
    int rc = pthread_create(&bg->thread, NULL, bg_main, bg);
    if (rc != 0 && counted && bg->node->res)
        bg->node->res->counted = false;
    if (rc == 0)
        bg->has_thread = true;
    else
        bg->running = false;
    pthread_mutex_unlock(&bg->mu);
    return rc;
}

/* --- the external-task port ------------------------------------------------ */

static void op_info(void *ctx, task_info *info)
{
    agent_bg *bg = ctx;
    spawn_node *n = bg->node;
    loom_str cmd = LOOM_STR_INIT;
    str_printf(&cmd, "Agent(%s): %s", n->type ? n->type : "agent",
               n->description ? n->description : spawn_node_label(n));
    info->command = str_steal(&cmd);
    info->description = n->description ? xstrdup(n->description) : NULL;
    info->cwd = n->worktree_path ? xstrdup(n->worktree_path)
                                 : xstrdup(n->session->cwd ? n->session->cwd : "");
    pthread_mutex_lock(&bg->mu);
    if (bg->running)
        info->status = TASK_RUNNING;
    else if (bg->end_state == SPAWN_CANCELLED)
        info->status = TASK_KILLED;
    else if (bg->end_state == SPAWN_FAILED)
        info->status = TASK_FAILED;
    else
        info->status = TASK_COMPLETED;
    info->exit_code = info->status == TASK_COMPLETED ? 0 : info->status == TASK_FAILED ? 1 : -1;
    info->pid = 0; /* a thread of Loom's, not a process */
    info->started_ms = bg->started_ms;
    info->ended_ms = bg->ended_ms;
    info->output_total = bg->output.len;
    pthread_mutex_unlock(&bg->mu);
}

static void op_read(void *ctx, loom_str *out, uint64_t *missed)
{
    agent_bg *bg = ctx;
    *missed = 0;
    pthread_mutex_lock(&bg->mu);
    if (bg->read_mark < bg->output.len)
        str_append(out, bg->output.ptr + bg->read_mark, bg->output.len - bg->read_mark);
    bg->read_mark = bg->output.len;
    pthread_mutex_unlock(&bg->mu);
}

static void op_tail(void *ctx, size_t max, loom_str *out)
{
    agent_bg *bg = ctx;
    pthread_mutex_lock(&bg->mu);
    size_t from = bg->output.len > max ? bg->output.len - max : 0;
    str_append(out, bg->output.ptr ? bg->output.ptr + from : "", bg->output.len - from);
    pthread_mutex_unlock(&bg->mu);
}

/* 0 ended, 1 timeout, 2 cancelled. */
static int op_wait(void *ctx, long timeout_ms, const loom_cancel *cancel)
{
    agent_bg *bg = ctx;
    int64_t until = timeout_ms >= 0 ? clock_mono_ms() + timeout_ms : INT64_MAX;
    int rc = 0;
    pthread_mutex_lock(&bg->mu);
    while (bg->running) {
        if (cancel_requested(cancel)) {
            rc = 2;
            break;
        }
        int64_t left = until - clock_mono_ms();
        if (left <= 0) {
            rc = 1;
            break;
        }
        struct timespec ts;
        clock_deadline(&ts, CLOCK_MONOTONIC, left < AGENT_BG_WAIT_SLICE_MS ? (long)left : AGENT_BG_WAIT_SLICE_MS);
        pthread_cond_timedwait(&bg->cv, &bg->mu, &ts);
    }
    pthread_mutex_unlock(&bg->mu);
    return rc;
}

static int op_stop(void *ctx, long grace_ms)
{
    agent_bg *bg = ctx;
    pthread_mutex_lock(&bg->mu);
    bool was = bg->running;
    pthread_mutex_unlock(&bg->mu);
    if (!was)
        return 1;
    spawn_node_cancel_subtree(bg->node, CANCEL_RUN);
    /* A shell's grace is for SIGTERM; an agent needs its current step to
     * see the flag, so it gets at least its own wait. */
    op_wait(bg, grace_ms > AGENT_BG_STOP_WAIT_MS ? grace_ms : AGENT_BG_STOP_WAIT_MS, NULL);
    return 0;
}

static void op_release(void *ctx)
{
    /* The state belongs to the node until agent_bg_join_all. */
    agent_bg *bg = ctx;
    pthread_mutex_lock(&bg->mu);
    bg->registered = false;
    pthread_mutex_unlock(&bg->mu);
}

static const task_external_ops bg_ops = {op_info, op_read, op_tail, op_wait, op_stop, op_release};

/* --- the entry points ------------------------------------------------------ */

/* The node's bg state, made on first use (under the session's mutex). */
static agent_bg *node_bg(spawn_node *n)
{
    pthread_mutex_lock(&n->session->mu);
    if (!n->bg)
        n->bg = bg_new(n);
    agent_bg *bg = n->bg;
    pthread_mutex_unlock(&n->session->mu);
    return bg;
}

/* Lists bg in tasks once (a resumed agent is already there). */
static void bg_register(agent_bg *bg, task_registry *tasks)
{
    if (!tasks)
        return;
    pthread_mutex_lock(&bg->mu);
    bool already = bg->registered;
    bg->registered = true;
    pthread_mutex_unlock(&bg->mu);
    if (!already && task_registry_add_external(tasks, bg->node->id, &bg_ops, bg) != 0)
        LOG_W("agents", "agent %s: could not be listed as a task", bg->node->id);
}

/* Joins the threads of background agents that have ended: an exited
 * thread keeps its stack until joined, and a long session starts many. */
static void reap_ended(agents_session *s)
{
    for (;;) {
        agent_bg *done = NULL;
        pthread_t th;
        pthread_mutex_lock(&s->mu);
        for (spawn_node *n = s->nodes; n && !done; n = n->next_in_session) {
            agent_bg *bg = n->bg;
            if (!bg)
                continue;
            pthread_mutex_lock(&bg->mu);
            if (bg->has_thread && !bg->running) {
                done = bg;
                th = bg->thread;
                bg->has_thread = false;
            }
            pthread_mutex_unlock(&bg->mu);
        }
        pthread_mutex_unlock(&s->mu);
        if (!done)
            return;
        pthread_join(th, NULL); /* it is past its last use of bg, or about to be */
    }
}

int agent_bg_start(spawn_node *child, const char *prompt, tool_ctx *parent_ctx, tool_result *out)
{
    assert(child && prompt && out);
    reap_ended(child->session);
    child->background = true;
    agent_bg *bg = node_bg(child);
    int rc = bg_launch(bg, prompt, false);
    if (rc != 0)
        return tool_error(out, "could not start the background agent %s: %s", child->id,
                          strerror(rc)) - 1;
    bg_register(bg, parent_ctx ? parent_ctx->tasks : NULL);
    str_printf(&out->text,
               "Async agent launched successfully.\nagentId: %s (%s)\noutput_file: %s\n"
               "The agent works in the background; you will be told when it finishes. Do not "
               "wait or poll for it: go on with other work. TaskOutput with task_id %s shows "
               "its result so far, TaskStop stops it, SendMessage gives it more input.",
               child->id, spawn_node_label(child), bg->output_path, child->id);
    out->raw = json_pack("{s:s,s:s,s:s,s:s?,s:s}", "status", "async_launched", "agentId",
                         child->id, "outputFile", bg->output_path, "description",
                         child->description, "prompt", prompt);
    return 0;
}

void agent_bg_join_all(agents_session *s)
{
    for (;;) {
        /* Nodes are never removed before the session's end, so the list
         * can be walked again after each join without the mutex held. */
        agent_bg *todo = NULL;
        pthread_mutex_lock(&s->mu);
        for (spawn_node *n = s->nodes; n && !todo; n = n->next_in_session) {
            agent_bg *bg = n->bg;
            if (bg && bg->has_thread)
                todo = bg;
        }
        pthread_mutex_unlock(&s->mu);
        if (!todo)
            break;
        pthread_mutex_lock(&todo->mu);
        pthread_t th = todo->thread;
        todo->has_thread = false;
        pthread_mutex_unlock(&todo->mu);
        pthread_join(th, NULL);
    }
    pthread_mutex_lock(&s->mu);
    for (spawn_node *n = s->nodes; n; n = n->next_in_session) {
        if (n->bg) {
            bg_free(n->bg);
            n->bg = NULL;
        }
    }
    pthread_mutex_unlock(&s->mu);
}

/* Background children of n still running. */
static int running_children(spawn_node *n)
{
    int k = 0;
    pthread_mutex_lock(&n->session->mu);
    for (spawn_node *c = n->children; c; c = c->next_sibling) {
        agent_bg *bg = c->bg;
        if (!bg)
            continue;
        pthread_mutex_lock(&bg->mu);
        k += bg->running;
        pthread_mutex_unlock(&bg->mu);
    }
    pthread_mutex_unlock(&n->session->mu);
    return k;
}

/* Whether n's run ends with nobody left to hear of its background agents:
 * any sub-agent (its release cancels them), and a root run no person
 * watches (-p: the process ends with it). */
static bool must_wait(spawn_node *n)
{
    if (n->depth > 0)
        return true;
    const agents_run_env *env = &n->session->env;
    const governance *g = n->session->env_set && env->io ? env->io->gov : NULL;
    return !(g && g->interactive);
}

char *agent_bg_before_final(spawn_node *n, const char *final_text)
{
    (void)final_text;
    if (running_children(n) == 0 || !must_wait(n))
        return spawn_node_take_notes(n);
    /* Each completion posts one note, so this returns once per background
     * agent at most; a cancel (the user, the wall cap) ends the wait. */
    while (!spawn_node_cancelled(n)) {
        if (spawn_node_wait_notes(n, 1000))
            return spawn_node_take_notes(n);
        if (running_children(n) == 0)
            return spawn_node_take_notes(n);
    }
    return NULL;
}

/* --- SendMessage ----------------------------------------------------------- */

static const char SEND_MESSAGE_SCHEMA[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"to\":{\"type\":\"string\",\"description\":\"The agent's name or id (agent_3)\"},"
    "\"message\":{\"type\":\"string\",\"description\":\"What to tell it\"}},"
    "\"required\":[\"to\",\"message\"],\"additionalProperties\":false}";

static const char SEND_MESSAGE_DESCRIPTION[] =
    "Sends a message to a sub-agent you started, by its name or id. A running agent reads it "
    "at its next step; a finished one is resumed in the background with the message as its "
    "next instruction, keeping everything it did before, and you are told when it finishes.";

/* Whether target is n or one of its ancestors: a message to itself or up
 * its own chain would wait on its own run. */
static bool is_self_or_ancestor(const spawn_node *target, const spawn_node *n)
{
    for (const spawn_node *p = n; p; p = p->parent)
        if (p == target)
            return true;
    return false;
}

static int send_message_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const char *to = json_get_str(input, "to", NULL);
    const char *message = json_get_str(input, "message", NULL);
    if (!to || !*to || !message || !*message)
        return tool_error(out, "SendMessage needs \"to\" (an agent's name or id) and a "
                               "non-empty \"message\"");
    spawn_node *self = ctx->spawn;
    if (!self)
        return tool_error(out, "SendMessage is not available here: this run has no sub-agents");
    spawn_node *target = spawn_session_find(self->session, to);
    if (!target || target->depth == 0)
        return tool_error(out, "No sub-agent named or numbered '%s' in this session", to);
    if (is_self_or_ancestor(target, self))
        return tool_error(out, "SendMessage to '%s': an agent cannot message itself or the "
                               "agents it runs under; finish with your answer instead", to);
    loom_str note = LOOM_STR_INIT;
    str_printf(&note, "Message from %s: %s", self->depth ? spawn_node_label(self) : "the main agent",
               message);
    agent_bg *bg = node_bg(target);
    pthread_mutex_lock(&bg->mu);
    bool running = bg->running || spawn_node_state(target) == SPAWN_RUNNING;
    pthread_mutex_unlock(&bg->mu);
    if (running) {
        spawn_node_post_note(target, note.ptr);
        str_free(&note);
        str_printf(&out->text, "Message delivered to %s (%s); it reads it at its next step.",
                   target->id, spawn_node_label(target));
        out->raw = json_pack("{s:s,s:s}", "status", "delivered", "agentId", target->id);
        return 0;
    }
    if (spawn_node_cancelled(target)) {
        str_free(&note);
        return tool_error(out, "Agent %s was stopped; start a new agent instead", target->id);
    }
    if (!target->res) {
        str_free(&note);
        return tool_error(out, "Agent %s never started (it was refused); start a new agent",
                          target->id);
    }
    if (target->res->want_worktree) {
        str_free(&note);
        return tool_error(out,
                          "Agent %s cannot be resumed: it ran in a worktree of its own, which "
                          "ended with its run%s%s; start a new agent instead",
                          target->id, target->worktree_branch ? " (its work is on branch " : "",
                          target->worktree_branch ? target->worktree_branch : "");
    }
    /* Finished: resume it on its own thread with the message as its next
     * user text; its sidechain carries everything it did before. The
     * resumed run takes a slot under agents.maxRunning like a new one. */
    int cap = target->session->config.max_running;
    if (spawn_pool_begin_run(target, cap) != 0) {
        str_free(&note);
        return tool_error(out,
                          "SendMessage to %s: %d sub-agents already run, the most at once "
                          "(agents.maxRunning): wait for one to end, then send it again",
                          target->id, cap);
    }
    int rc = bg_launch(bg, note.ptr, true);
    if (rc != 0)
        spawn_pool_end_run(target);
    if (rc == EBUSY) {
        /* Another message resumed it a moment ago: this one joins it. */
        spawn_node_post_note(target, note.ptr);
        str_free(&note);
        str_printf(&out->text, "Message delivered to %s (%s); it reads it at its next step.",
                   target->id, spawn_node_label(target));
        out->raw = json_pack("{s:s,s:s}", "status", "delivered", "agentId", target->id);
        return 0;
    }
    str_free(&note);
    if (rc != 0)
        return tool_error(out, "could not resume agent %s: %s", target->id, strerror(rc));
    target->background = true;
    bg_register(bg, ctx->tasks);
    str_printf(&out->text,
               "Agent %s (%s) resumed in the background with your message; you will be told "
               "when it finishes.",
               target->id, spawn_node_label(target));
    out->raw = json_pack("{s:s,s:s}", "status", "resumed", "agentId", target->id);
    return 0;
}

const tool_def tool_send_message = {
    .name = "SendMessage",
    .description = SEND_MESSAGE_DESCRIPTION,
    .input_schema = SEND_MESSAGE_SCHEMA,
    .read_only = false,
    .concurrency_safe = true,
    .run = send_message_run,
    /* It changes only Loom's own state (an agent's inbox, or its resumed
     * run, whose own tool calls each go through the pipeline). */
    .local_state_only = true,
};
