/* tree.c — the spawn tree: nodes, their counters and inboxes, the budget
 * pool a root run shares with its sub-agents, and the loop_tree_port each
 * run of the tree gets.
 *
 * Owns every node of an agents_session (tree.h's owner rule: freed only by
 * spawn_session_free_nodes, once no thread of the session runs). Threading:
 * counters are atomics; the shape, names, inboxes and reservations are
 * under the session's mutex; the port's hooks run on the node's run thread.
 */
#include "agents/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agents/runner.h"
#include "agents/structured.h"
#include "base/clock.h"
#include "base/str.h"

#define MICRO 1e6

static void usage_init(spawn_usage *u)
{
    atomic_init(&u->input, 0);
    atomic_init(&u->output, 0);
    atomic_init(&u->cache_read, 0);
    atomic_init(&u->cache_write, 0);
    atomic_init(&u->reasoning, 0);
    atomic_init(&u->micro_usd, 0);
    atomic_init(&u->cost_known, false);
}

static spawn_node *node_alloc(agents_session *s)
{
    spawn_node *n = xcalloc(1, sizeof *n);
    n->session = s;
    atomic_init(&n->cancel, CANCEL_NONE);
    atomic_init(&n->state, SPAWN_NEW);
    atomic_init(&n->turns, 0);
    atomic_init(&n->tool_uses, 0);
    atomic_init(&n->current_tool, NULL);
    atomic_init(&n->last_progress_ms, 0);
    usage_init(&n->own);
    usage_init(&n->tree);
    pthread_cond_init(&n->inbox_cv, NULL);
    n->started_ms = clock_wall_ms();
    return n;
}

/* Appends n to the session's list; the caller holds the mutex. */
static void session_link(agents_session *s, spawn_node *n)
{
    if (s->nodes_tail)
        s->nodes_tail->next_in_session = n;
    else
        s->nodes = n;
    s->nodes_tail = n;
}

spawn_node *spawn_node_new_root(agents_session *s, const char *run_id, const loop_params *p,
                                const loom_cancel *outer)
{
    spawn_node *n = node_alloc(s);
    spawn_pool *pool = xcalloc(1, sizeof *pool);
    pool->cap_tokens = p && p->max_tokens_total > 0 ? p->max_tokens_total : 0;
    pool->cap_micro_usd = p && p->max_usd > 0 ? (int64_t)(p->max_usd * MICRO + 0.5) : 0;
    atomic_init(&pool->used_tokens, 0);
    atomic_init(&pool->used_micro_usd, 0);
    atomic_init(&pool->running, 0);
    n->pool = pool;
    n->outer_cancel = outer;
    n->run_id = xstrdup(run_id);
    atomic_store(&n->state, SPAWN_RUNNING);
    pthread_mutex_lock(&s->mu);
    snprintf(n->id, sizeof n->id, "main_%d", ++s->next_root);
    session_link(s, n);
    pthread_mutex_unlock(&s->mu);
    return n;
}

static spawn_node *find_locked(agents_session *s, const char *key)
{
    for (spawn_node *n = s->nodes; n; n = n->next_in_session)
        if (!strcmp(n->id, key))
            return n;
    for (spawn_node *n = s->nodes; n; n = n->next_in_session)
        if (n->name && !strcmp(n->name, key))
            return n;
    return NULL;
}

/* A name the model gives an agent: SendMessage addresses it, events and
 * notes to the parent's model carry it. So one line of at most
 * SPAWN_NAME_MAX bytes, no '/' (it reads as a path in logs and topics),
 * and not an id's shape (agent_<n>): ids are found first, so such a name
 * would stop addressing its agent once the id is given out. */
#define SPAWN_NAME_MAX 64
static int name_check(const char *name, loom_error *err)
{
    size_t len = strlen(name);
    const char *why = NULL;
    if (len > SPAWN_NAME_MAX)
        why = "is longer than 64 bytes";
    for (const char *p = name; !why && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            why = "holds a control character (a newline, a tab, …)";
        else if (*p == '/' || *p == '\\')
            why = "holds a '/' or '\\'";
    if (!why && (!strcmp(name, ".") || !strcmp(name, "..")))
        why = "is a path step";
    if (!why && !strncmp(name, "agent_", 6) && name[6] &&
        strspn(name + 6, "0123456789") == len - 6)
        why = "has the shape of an agent id (agent_<n>)";
    if (!why)
        return 0;
    /* The name is the model's: quoted cut and with its bytes escaped. */
    loom_str q = LOOM_STR_INIT;
    for (size_t i = 0; i < len && i < 40; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
            str_printf(&q, "\\x%02x", c);
        else
            str_putc(&q, (char)c);
    }
    loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                   "Agent: \"name\" \"%s%s\" %s: give one line of at most %d bytes of letters, "
                   "digits, spaces and punctuation other than '/'",
                   str_cstr(&q), len > 40 ? "…" : "", why, SPAWN_NAME_MAX);
    str_free(&q);
    return -1;
}

spawn_node *spawn_node_new_child(spawn_node *parent, const char *type, const char *name,
                                 const char *description, loom_error *err)
{
    agents_session *s = parent->session;
    if (name && *name && name_check(name, err) != 0)
        return NULL;
    pthread_mutex_lock(&s->mu);
    if (name && *name && find_locked(s, name)) {
        pthread_mutex_unlock(&s->mu);
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "Agent: the name \"%s\" is taken by another agent of this session "
                       "(SendMessage finds agents by name): choose another",
                       name);
        return NULL;
    }
    spawn_node *n = node_alloc(s);
    snprintf(n->id, sizeof n->id, "agent_%d", ++s->next_agent);
    n->name = name && *name ? xstrdup(name) : NULL;
    n->type = xstrdup(type);
    n->description = xstrdup(description);
    n->depth = parent->depth + 1;
    n->parent = parent;
    n->pool = parent->pool;
    n->run_id = xstrdup(parent->run_id);
    n->next_sibling = parent->children;
    parent->children = n;
    session_link(s, n);
    pthread_mutex_unlock(&s->mu);
    return n;
}

spawn_node *spawn_session_find(agents_session *s, const char *id_or_name)
{
    if (!s || !id_or_name)
        return NULL;
    pthread_mutex_lock(&s->mu);
    spawn_node *n = find_locked(s, id_or_name);
    pthread_mutex_unlock(&s->mu);
    return n;
}

static void cancel_locked(spawn_node *n, int level)
{
    int cur = atomic_load(&n->cancel);
    /* A run cancel always wins; an Act level never lowers one. */
    if (level == CANCEL_RUN)
        atomic_store(&n->cancel, CANCEL_RUN);
    else
        cancel_interrupt_act(&n->cancel, level);
    (void)cur;
    for (spawn_node *c = n->children; c; c = c->next_sibling)
        cancel_locked(c, level);
    pthread_cond_broadcast(&n->inbox_cv);
}

void spawn_node_cancel_subtree(spawn_node *n, int level)
{
    if (!n)
        return;
    pthread_mutex_lock(&n->session->mu);
    cancel_locked(n, level);
    pthread_mutex_unlock(&n->session->mu);
}

bool spawn_node_cancelled(const spawn_node *n)
{
    for (const spawn_node *p = n; p; p = p->parent) {
        if (cancel_run_requested(&p->cancel))
            return true;
        if (p->outer_cancel && cancel_run_requested(p->outer_cancel))
            return true;
    }
    return false;
}

spawn_state spawn_node_state(const spawn_node *n)
{
    return (spawn_state)atomic_load(&n->state);
}

void spawn_node_set_state(spawn_node *n, spawn_state st)
{
    atomic_store(&n->state, (int)st);
}

const char *spawn_state_name(spawn_state st)
{
    static const char *const names[] = {"new", "running", "idle", "failed", "cancelled"};
    return (unsigned)st < sizeof names / sizeof *names ? names[st] : "unknown";
}

const char *spawn_node_label(const spawn_node *n)
{
    return n->name ? n->name : n->id;
}

/* ---- inbox ---------------------------------------------------------------- */

void spawn_node_post_note(spawn_node *n, const char *text)
{
    if (!n || !text)
        return;
    pthread_mutex_lock(&n->session->mu);
    if (n->inbox_n == n->inbox_cap) {
        n->inbox_cap = n->inbox_cap ? n->inbox_cap * 2 : 4;
        n->inbox = xrealloc(n->inbox, n->inbox_cap * sizeof *n->inbox);
    }
    n->inbox[n->inbox_n++] = xstrdup(text);
    pthread_cond_broadcast(&n->inbox_cv);
    pthread_mutex_unlock(&n->session->mu);
}

char *spawn_node_take_notes(spawn_node *n)
{
    if (!n)
        return NULL;
    pthread_mutex_lock(&n->session->mu);
    char *out = NULL;
    if (n->inbox_n) {
        loom_str s = LOOM_STR_INIT;
        for (size_t i = 0; i < n->inbox_n; i++) {
            if (i)
                str_puts(&s, "\n\n");
            str_puts(&s, n->inbox[i]);
            free(n->inbox[i]);
        }
        n->inbox_n = 0;
        out = str_steal(&s);
    }
    pthread_mutex_unlock(&n->session->mu);
    return out;
}

bool spawn_node_wait_notes(spawn_node *n, long timeout_ms)
{
    struct timespec deadline;
    clock_deadline(&deadline, CLOCK_REALTIME, timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&n->session->mu);
    while (!n->inbox_n && !spawn_node_cancelled(n) && timeout_ms != 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&n->inbox_cv, &n->session->mu);
        else if (pthread_cond_timedwait(&n->inbox_cv, &n->session->mu, &deadline) != 0)
            break;
    }
    bool have = n->inbox_n > 0;
    pthread_mutex_unlock(&n->session->mu);
    return have;
}

/* ---- usage ---------------------------------------------------------------- */

static void usage_add(spawn_usage *dst, const msg_usage *u, int64_t micro, bool known)
{
    atomic_fetch_add(&dst->input, u->input_tokens);
    atomic_fetch_add(&dst->output, u->output_tokens);
    atomic_fetch_add(&dst->cache_read, u->cache_read_tokens);
    atomic_fetch_add(&dst->cache_write, u->cache_creation_tokens);
    atomic_fetch_add(&dst->reasoning, u->reasoning_tokens);
    if (known) {
        atomic_fetch_add(&dst->micro_usd, micro);
        atomic_store(&dst->cost_known, true);
    }
}

void spawn_node_charge(spawn_node *n, const msg_usage *u, double usd)
{
    if (!n || !u)
        return;
    bool known = usd >= 0;
    int64_t micro = known ? (int64_t)(usd * MICRO + 0.5) : 0;
    usage_add(&n->own, u, micro, known);
    for (spawn_node *p = n; p; p = p->parent)
        usage_add(&p->tree, u, micro, known);
    if (n->pool) {
        atomic_fetch_add(&n->pool->used_tokens, msg_usage_total(u));
        atomic_fetch_add(&n->pool->used_micro_usd, micro);
    }
}

int64_t spawn_usage_tokens(const spawn_usage *u)
{
    return atomic_load(&u->input) + atomic_load(&u->output) + atomic_load(&u->cache_read) +
           atomic_load(&u->cache_write);
}

void spawn_node_usage(const spawn_node *n, bool tree, msg_usage *out, double *usd)
{
    const spawn_usage *u = tree ? &n->tree : &n->own;
    memset(out, 0, sizeof *out);
    out->input_tokens = atomic_load(&u->input);
    out->output_tokens = atomic_load(&u->output);
    out->cache_read_tokens = atomic_load(&u->cache_read);
    out->cache_creation_tokens = atomic_load(&u->cache_write);
    out->reasoning_tokens = atomic_load(&u->reasoning);
    if (usd)
        *usd = atomic_load(&u->cost_known) ? (double)atomic_load(&u->micro_usd) / MICRO : -1;
}

void spawn_node_set_tool(spawn_node *n, const char *tool)
{
    char *copy = tool ? xstrdup(tool) : NULL;
    pthread_mutex_lock(&n->session->mu);
    char *old = atomic_exchange(&n->current_tool, copy);
    pthread_mutex_unlock(&n->session->mu);
    free(old);
}

char *spawn_node_tool(spawn_node *n)
{
    /* Sets free the old string: both sides hold the mutex, so a reader
     * never copies a string being freed. */
    pthread_mutex_lock(&n->session->mu);
    char *t = atomic_load(&n->current_tool);
    char *copy = xstrdup(t);
    pthread_mutex_unlock(&n->session->mu);
    return copy;
}

/* ---- commands run -------------------------------------------------------- */

/* cmd without the blanks around it, as a new string. */
static char *trimmed(const char *cmd)
{
    while (*cmd == ' ' || *cmd == '\t' || *cmd == '\n')
        cmd++;
    size_t len = strlen(cmd);
    while (len && (cmd[len - 1] == ' ' || cmd[len - 1] == '\t' || cmd[len - 1] == '\n'))
        len--;
    return xstrndup(cmd, len);
}

void spawn_node_note_command(spawn_node *n, const char *cmd)
{
    if (!n || !cmd)
        return;
    char *t = trimmed(cmd);
    pthread_mutex_lock(&n->session->mu);
    n->commands = xrealloc(n->commands, (n->n_commands + 1) * sizeof *n->commands);
    n->commands[n->n_commands++] = t;
    pthread_mutex_unlock(&n->session->mu);
}

bool spawn_node_ran_command(spawn_node *n, const char *cmd)
{
    if (!n || !cmd)
        return false;
    char *t = trimmed(cmd);
    bool found = false;
    pthread_mutex_lock(&n->session->mu);
    for (size_t i = 0; i < n->n_commands && !found; i++)
        found = !strcmp(n->commands[i], t);
    pthread_mutex_unlock(&n->session->mu);
    free(t);
    return found;
}

/* ---- the pool: shares and the running cap ------------------------------- */

/* Tokens of live reservations not spent yet; the caller holds the mutex. */
static void outstanding_locked(agents_session *s, spawn_pool *pool, int64_t *tok, int64_t *micro)
{
    *tok = *micro = 0;
    for (spawn_node *n = s->nodes; n; n = n->next_in_session) {
        if (n->pool != pool || (!n->share_tokens && !n->share_micro_usd))
            continue;
        int64_t spent = spawn_usage_tokens(&n->tree);
        if (n->share_tokens > spent)
            *tok += n->share_tokens - spent;
        int64_t spent_usd = atomic_load(&n->tree.micro_usd);
        if (n->share_micro_usd > spent_usd)
            *micro += n->share_micro_usd - spent_usd;
    }
}

int spawn_pool_reserve(spawn_node *child, int64_t tokens, int64_t micro_usd, char **why)
{
    if (tokens <= 0 && micro_usd <= 0)
        return 0;
    agents_session *s = child->session;
    spawn_pool *pool = child->pool;
    pthread_mutex_lock(&s->mu);
    int64_t out_tok, out_micro;
    outstanding_locked(s, pool, &out_tok, &out_micro);
    int rc = 0;
    loom_str msg = LOOM_STR_INIT;
    if (tokens > 0 && pool->cap_tokens > 0) {
        int64_t rest = pool->cap_tokens - atomic_load(&pool->used_tokens) - out_tok;
        if (tokens > rest) {
            str_printf(&msg,
                       "Agent: a share of %lld tokens is more than the %lld tokens of the budget "
                       "not yet spent or reserved by other agents (cap %lld)",
                       (long long)tokens, (long long)(rest > 0 ? rest : 0),
                       (long long)pool->cap_tokens);
            rc = -1;
        }
    }
    if (!rc && micro_usd > 0 && pool->cap_micro_usd > 0) {
        int64_t rest = pool->cap_micro_usd - atomic_load(&pool->used_micro_usd) - out_micro;
        if (micro_usd > rest) {
            str_printf(&msg,
                       "Agent: a share of $%.4f is more than the $%.4f of the cost cap not yet "
                       "spent or reserved by other agents",
                       (double)micro_usd / MICRO, (double)(rest > 0 ? rest : 0) / MICRO);
            rc = -1;
        }
    }
    if (!rc) {
        child->share_tokens = tokens > 0 ? tokens : 0;
        child->share_micro_usd = micro_usd > 0 ? micro_usd : 0;
        pool->reserved_tokens += child->share_tokens;
        pool->reserved_micro_usd += child->share_micro_usd;
    }
    pthread_mutex_unlock(&s->mu);
    if (rc && why)
        *why = str_steal(&msg);
    else
        str_free(&msg);
    return rc;
}

void spawn_pool_unreserve(spawn_node *child)
{
    agents_session *s = child->session;
    pthread_mutex_lock(&s->mu);
    child->pool->reserved_tokens -= child->share_tokens;
    child->pool->reserved_micro_usd -= child->share_micro_usd;
    /* The share stays on the node (exhausted() still reads it on a resume);
     * the pool no longer counts what it did not spend as reserved. */
    child->share_tokens = child->share_tokens ? spawn_usage_tokens(&child->tree) : 0;
    child->share_micro_usd = child->share_micro_usd ? atomic_load(&child->tree.micro_usd) : 0;
    pthread_mutex_unlock(&s->mu);
}

int spawn_pool_begin_run(spawn_node *child, int max_running)
{
    spawn_pool *pool = child->pool;
    int cur = atomic_load(&pool->running);
    do {
        if (max_running > 0 && cur >= max_running)
            return -1;
    } while (!atomic_compare_exchange_weak(&pool->running, &cur, cur + 1));
    return 0;
}

void spawn_pool_end_run(spawn_node *child)
{
    atomic_fetch_sub(&child->pool->running, 1);
}

/* ---- the port ------------------------------------------------------------- */

bool spawn_node_exhausted(spawn_node *n, loom_stop_reason *stop, char *msg, size_t size)
{
    if (spawn_node_cancelled(n)) {
        *stop = LOOM_STOP_CANCELLED;
        snprintf(msg, size, "cancelled: the agent or one above it was stopped");
        return true;
    }
    /* A share binds the node and everything under it. */
    for (spawn_node *p = n; p && p->parent; p = p->parent) {
        int64_t used = spawn_usage_tokens(&p->tree);
        if (p->share_tokens > 0 && used >= p->share_tokens) {
            *stop = LOOM_STOP_BUDGET_SHARE;
            snprintf(msg, size, "stopped at %s's share of the budget: %lld of %lld tokens",
                     spawn_node_label(p), (long long)used, (long long)p->share_tokens);
            return true;
        }
        int64_t micro = atomic_load(&p->tree.micro_usd);
        if (p->share_micro_usd > 0 && micro >= p->share_micro_usd) {
            *stop = LOOM_STOP_BUDGET_SHARE;
            snprintf(msg, size, "stopped at %s's share of the cost cap: $%.4f of $%.4f",
                     spawn_node_label(p), (double)micro / MICRO,
                     (double)p->share_micro_usd / MICRO);
            return true;
        }
    }
    spawn_pool *pool = n->pool;
    int64_t used = atomic_load(&pool->used_tokens);
    if (pool->cap_tokens > 0 && used >= pool->cap_tokens) {
        *stop = LOOM_STOP_TOKEN_BUDGET;
        snprintf(msg, size,
                 "stopped at the token budget: %lld of %lld tokens used by the agent tree",
                 (long long)used, (long long)pool->cap_tokens);
        return true;
    }
    int64_t micro = atomic_load(&pool->used_micro_usd);
    if (pool->cap_micro_usd > 0 && micro >= pool->cap_micro_usd) {
        *stop = LOOM_STOP_USD_BUDGET;
        snprintf(msg, size, "stopped at the cost cap: $%.4f of $%.4f used by the agent tree",
                 (double)micro / MICRO, (double)pool->cap_micro_usd / MICRO);
        return true;
    }
    return false;
}

static void port_charge(void *ctx, const msg_usage *u, double usd)
{
    spawn_node *n = ctx;
    spawn_node_charge(n, u, usd);
    atomic_fetch_add(&n->turns, 1);
}

static bool port_exhausted(void *ctx, loom_stop_reason *stop, char *msg, size_t size)
{
    return spawn_node_exhausted(ctx, stop, msg, size);
}

static char *port_take_notes(void *ctx)
{
    return spawn_node_take_notes(ctx);
}

static char *port_before_final(void *ctx, const char *final_text)
{
    spawn_node *n = ctx;
    char *r = structured_before_final(n, final_text);
    if (r)
        return r;
    return agent_bg_before_final(n, final_text);
}

loop_tree_port spawn_node_tree_port(spawn_node *n)
{
    return (loop_tree_port){.ctx = n,
                            .charge = port_charge,
                            .exhausted = port_exhausted,
                            .take_notes = port_take_notes,
                            .before_final = port_before_final};
}

/* ---- JSON ----------------------------------------------------------------- */

json_t *spawn_node_json(spawn_node *n)
{
    json_t *o = json_object();
    json_object_set_new(o, "agent_id", json_string(n->id));
    if (n->name)
        json_object_set_new(o, "name", json_string(n->name));
    if (n->type)
        json_object_set_new(o, "agent_type", json_string(n->type));
    if (n->model)
        json_object_set_new(o, "model", json_string(n->model));
    json_object_set_new(o, "depth", json_integer(n->depth));
    json_object_set_new(o, "state", json_string(spawn_state_name(spawn_node_state(n))));
    json_object_set_new(o, "background", json_boolean(n->background));
    msg_usage u;
    double usd;
    spawn_node_usage(n, false, &u, &usd);
    json_object_set_new(o, "usage", msg_usage_to_json(&u));
    if (usd >= 0)
        json_object_set_new(o, "cost_usd", json_real(usd));
    json_object_set_new(o, "tokens", json_integer(spawn_usage_tokens(&n->tree)));
    char *tool = spawn_node_tool(n);
    if (tool)
        json_object_set_new(o, "tool", json_string(tool));
    free(tool);
    int64_t end = n->ended_ms ? n->ended_ms : clock_wall_ms();
    json_object_set_new(o, "elapsed_ms", json_integer(end - n->started_ms));
    json_object_set_new(o, "turns", json_integer(atomic_load(&n->turns)));
    json_object_set_new(o, "tool_uses", json_integer(atomic_load(&n->tool_uses)));
    if (n->transcript_path)
        json_object_set_new(o, "transcript", json_string(n->transcript_path));
    if (n->worktree_path)
        json_object_set_new(o, "worktree",
                            json_pack("{s:s,s:s?,s:b,s:b}", "path", n->worktree_path, "branch",
                                      n->worktree_branch, "changed", n->worktree_changed,
                                      "merged", n->worktree_merged));
    return o;
}

json_t *spawn_usage_by_agent(spawn_node *root)
{
    json_t *rows = json_array();
    agents_session *s = root->session;
    pthread_mutex_lock(&s->mu);
    spawn_node *list = s->nodes;
    pthread_mutex_unlock(&s->mu);
    for (spawn_node *n = list; n; n = n->next_in_session) {
        bool under = false;
        for (spawn_node *p = n->parent; p && !under; p = p->parent)
            under = p == root;
        if (under)
            json_array_append_new(rows, spawn_node_json(n));
    }
    return rows;
}

struct mf_bus *spawn_node_bus(spawn_node *n)
{
    return n ? n->session->bus : NULL;
}

void spawn_session_free_nodes(agents_session *s)
{
    spawn_node *n = s->nodes;
    while (n) {
        spawn_node *next = n->next_in_session;
        if (!n->parent)
            free(n->pool);
        free(n->name);
        free(n->type);
        free(n->model);
        free(n->description);
        free(n->run_id);
        free(n->parent_call_id);
        free(atomic_load(&n->current_tool));
        free(n->transcript_path);
        free(n->worktree_path);
        free(n->worktree_branch);
        free(n->last_text);
        json_decref(n->last_raw);
        json_decref(n->output_schema);
        json_decref(n->structured);
        for (size_t i = 0; i < n->n_commands; i++)
            free(n->commands[i]);
        free(n->commands);
        for (size_t i = 0; i < n->inbox_n; i++)
            free(n->inbox[i]);
        free(n->inbox);
        pthread_cond_destroy(&n->inbox_cv);
        free(n);
        n = next;
    }
    s->nodes = s->nodes_tail = NULL;
}
