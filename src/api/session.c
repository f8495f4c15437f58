/* session.c — loom_session: a transcript plus the per-session tool state
 * (read cache, file history, background shells, the plan). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/internal.h"
#include "base/fileio.h"
#include "base/json.h"
#include "base/log.h"
#include "context/mf_state.h"
#include "context/working.h"
#include "session/listing.h"
#include "session/session_index.h"
#include "session/record.h"
#include "session/store.h"
#include "governance/governance.h"
#include "governance/helper_log.h"
#include "provider/helper.h"
#include "provider/models.h"
#include "base/settings.h"
#include "session/file_history.h"
#include "tools/file_state.h"
#include "tools/tasks.h"
#include "tools/task_list.h"
#include "context/plan.h"

/* Splits a --allowedTools style list on commas outside parentheses.
 * Returns a NULL-terminated array (caller frees each and the array). */
static char **split_rules(const char *list)
{
    char **out = xcalloc(1, sizeof *out);
    size_t n = 0;
    if (!list)
        return out;
    const char *start = list;
    int depth = 0;
    for (const char *p = list;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && depth > 0)
            depth--;
        if (*p == '\0' || (*p == ',' && depth == 0)) {
            const char *a = start, *b = p;
            while (a < b && (*a == ' ' || *a == '\t'))
                a++;
            while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
                b--;
            if (b > a) {
                out = xrealloc(out, (n + 2) * sizeof *out);
                out[n++] = xstrndup(a, (size_t)(b - a));
                out[n] = NULL;
            }
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    return out;
}

/* "a\nb" → {"a", "b", NULL} (empty lines dropped); caller frees like
 * split_rules. */
static char **split_lines(const char *list)
{
    char **out = xcalloc(1, sizeof *out);
    size_t n = 0;
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, "\n");
        if (len) {
            out = xrealloc(out, (n + 2) * sizeof *out);
            out[n++] = xstrndup(p, len);
            out[n] = NULL;
        }
        p += len + (p[len] == '\n');
    }
    return out;
}

static void free_rules(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

static governance *make_governance(loom_agent *agent, transcript *t, loom_error *err)
{
    char **allow = split_rules(api_value(agent->values, "allowed_tools"));
    char **deny = split_rules(api_value(agent->values, "disallowed_tools"));
    char **ask = split_rules(api_value(agent->values, "ask_tools"));
    const char *timeout = api_value(agent->values, "approval_timeout_seconds");
    const char *tool_max = api_value(agent->values, "max_tool_seconds");
    char **dirs = split_lines(api_value(agent->values, "add_dirs"));
    governance_settings gs = {
        .user = agent->files[0],
        .project = agent->files[1],
        .local = agent->files[2],
        .cli_allow = (const char *const *)allow,
        .cli_deny = (const char *const *)deny,
        .cli_ask = (const char *const *)ask,
        .approval_timeout_ms = timeout ? strtoll(timeout, NULL, 10) * 1000 : 0,
        .tool_deadline_ms = tool_max ? strtoll(tool_max, NULL, 10) * 1000 : 0,
        .mode = api_value(agent->values, "permission_mode"),
        .add_dirs = (const char *const *)dirs,
        .interactive = agent->interactive,
        /* the answer config.c filtered the documents with */
        .trust = agent->trusted ? GOVERNANCE_TRUSTED : GOVERNANCE_UNTRUSTED,
        .sandbox = agent->sandbox,
        .sandbox_error = agent->sandbox_error,
    };
    json_t *plugin_hooks = api_plugin_hooks(&agent->plugins);
    gs.plugin_hooks = plugin_hooks;
    governance *g = governance_new(agent->cwd, transcript_session_id(t), transcript_path(t), &gs,
                                   err);
    if (g)
        g->classifier = &agent->provider; /* auto mode asks the agent's own model */
    json_decref(plugin_hooks);
    free_rules(allow);
    free_rules(deny);
    free_rules(ask);
    free_rules(dirs);
    return g;
}

/* The session around an opened transcript (which it takes over). NULL with
 * st set when the settings' rules or hooks are malformed. */
/* The edits a session can rewind: its file-history snapshots, read by
 * type so a lazily opened transcript reads only those lines. */
static void load_file_history(file_history *fh, transcript *t)
{
    size_t n = transcript_count(t), k = 0;
    json_t **recs = xcalloc(n ? n : 1, sizeof *recs);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(transcript_record_type(t, i), RECORD_FILE_HISTORY_SNAPSHOT))
            recs[k++] = transcript_record(t, i);
    file_history_load(fh, recs, k);
    free(recs);
}

static loom_session *wrap(loom_agent *agent, transcript *t, loom_status *st)
{
    loom_error err;
    governance *gov = make_governance(agent, t, &err);
    if (!gov) {
        api_status_from(st, &err);
        transcript_free(t);
        return NULL;
    }
    helper_router *helpers = helper_router_new(&agent->provider);
    const char *names[3];
    for (int i = 0; i < 3; i++)
        names[i] = settings_layer_name((settings_layer)i);
    if (helper_router_configure(helpers, agent->files, names, 3, &err) != 0) {
        api_status_from(st, &err);
        helper_router_free(helpers);
        governance_free(gov);
        transcript_free(t);
        return NULL;
    }
    gov->helpers = helpers;
    loom_session *s = xcalloc(1, sizeof *s);
    s->agent = agent;
    s->t = t;
    s->gov = gov;
    s->helpers = helpers;
    s->files = file_state_new();
    s->history = file_history_new(transcript_session_id(t));
    s->tasks = task_registry_new();
    s->todos = todo_list_new();
    s->working = working_new(s->todos);
    /* M_f: renew's snapshots live next to the session file. */
    const char *path = transcript_path(t);
    if (path) {
        size_t len = strlen(path);
        if (len > 6 && strcmp(path + len - 6, ".jsonl") == 0)
            len -= 6;
        s->mf_dir = xmalloc(len + 4);
        memcpy(s->mf_dir, path, len);
        memcpy(s->mf_dir + len, ".mf", 4);
        /* The task list beside the session file, so a resume finds it. */
        char *tl = xmalloc(len + 12);
        memcpy(tl, path, len);
        memcpy(tl + len, ".tasks.json", 12);
        loom_str why = LOOM_STR_INIT;
        s->task_list = task_list_open(tl, &why);
        if (why.len)
            LOG_W("tasks", "%s", why.ptr);
        str_free(&why);
        free(tl);
        /* A resumed session picks up the working memory its last renew
         * saved; a damaged snapshot is skipped, never fatal. */
        loom_error ignore;
        working_load(s->working, s->mf_dir, &ignore);
    } else {
        s->task_list = task_list_open(NULL, NULL);
    }
    pthread_mutex_init(&s->lock, NULL);
    context_state_init(&s->context);
    atomic_init(&s->run_active, false);
    /* A resumed session can still rewind the edits made before. */
    load_file_history(s->history, t);
    api_permission_mode_load(s);
    if (agent->agents.enabled) {
        agents_session_opts ao = {.config = &agent->agents,
                                  .catalog = agent->agents_catalog,
                                  .skills = agent->skills,
                                  .session_id = transcript_session_id(t),
                                  .session_path = transcript_path(t),
                                  .mf_dir = s->mf_dir,
                                  .cwd = agent->cwd};
        s->agents = agents_session_new(&ao);
    }
    api_ext_open(s);
    if (api_mcp_open(s, &err) != 0) {
        api_status_from(st, &err);
        loom_session_free(s);
        return NULL;
    }
    return s;
}

loom_session *loom_session_new(loom_agent *agent, loom_status *st)
{
    API_CHECK_ARG(st, agent, NULL);
    loom_error err;
    char *dir = store_project_dir(agent->cwd);
    transcript *t = transcript_create(dir, agent->cwd, provider_kind_name(agent->provider.kind),
                                      agent->provider.model, &err);
    free(dir);
    if (!t) {
        api_status_from(st, &err);
        return NULL;
    }
    api_status_ok(st);
    return wrap(agent, t, st);
}

/* The api's side of the transcript's rows port: the caller's
 * loom_session_rows, its message made a loom_error. */
static int rows_append(void *ctx, const char *session_id, size_t first_seq,
                       const char *const *lines, size_t n, loom_error *err)
{
    const loom_session_rows *rows = ctx;
    char *msg = NULL;
    if (rows->append(rows->ctx, session_id, first_seq, lines, n, &msg) == 0)
        return 0;
    int rc = loom_error_set(err, LOOM_ERR_IO, "storing records %zu..%zu of session %s: %s",
                            first_seq, first_seq + n - 1, session_id,
                            msg ? msg : "refused by the store");
    free(msg);
    return rc;
}

static int use_rows(transcript *t, const loom_session_rows *rows, bool with_existing,
                    loom_error *err)
{
    if (!rows)
        return 0;
    transcript_rows port = {.ctx = (void *)rows, .append = rows_append};
    return transcript_set_rows(t, &port, with_existing, err);
}

static loom_session *open_path_rows(loom_agent *agent, char *path, int rc, loom_error *err,
                                    const loom_session_rows *rows, loom_status *st)
{
    transcript *t = rc == 0 ? transcript_open(path, err) : NULL;
    free(path);
    /* Never continue from a history with a hole in it without saying so
     * (docs/session-format.md, "Holes in the chain"). */
    const char *accept = getenv("LOOM_ACCEPT_BROKEN_SESSION");
    if (t && (transcript_check(t, accept && *accept && strcmp(accept, "0") != 0, err) != 0 ||
              use_rows(t, rows, false, err) != 0)) {
        transcript_free(t);
        t = NULL;
    }
    if (!t) {
        api_status_from(st, err);
        return NULL;
    }
    api_status_ok(st);
    return wrap(agent, t, st);
}

static loom_session *open_path(loom_agent *agent, char *path, int rc, loom_error *err,
                               loom_status *st)
{
    return open_path_rows(agent, path, rc, err, NULL, st);
}

loom_session *loom_session_new_rows(loom_agent *agent, const loom_session_rows *rows,
                                    loom_status *st)
{
    API_CHECK_ARG(st, agent, NULL);
    API_CHECK_ARG(st, rows, NULL);
    API_CHECK_ARG(st, rows->append, NULL);
    loom_error err;
    char *dir = store_project_dir(agent->cwd);
    transcript *t = transcript_create(dir, agent->cwd, provider_kind_name(agent->provider.kind),
                                      agent->provider.model, &err);
    free(dir);
    if (t && use_rows(t, rows, true, &err) != 0) {
        /* Not in the rows: the file must not outlive it as a session. */
        char *gone = t ? strdup(transcript_path(t)) : NULL;
        transcript_free(t);
        t = NULL;
        if (gone)
            unlink(gone);
        free(gone);
    }
    if (!t) {
        api_status_from(st, &err);
        return NULL;
    }
    api_status_ok(st);
    return wrap(agent, t, st);
}

loom_session *loom_session_resume_rows(loom_agent *agent, const char *id,
                                       const loom_session_rows *rows, loom_status *st)
{
    API_CHECK_ARG(st, agent, NULL);
    API_CHECK_ARG(st, id, NULL);
    API_CHECK_ARG(st, rows, NULL);
    API_CHECK_ARG(st, rows->load, NULL);
    loom_error err;
    loom_error_clear(&err);
    if (!*id || strchr(id, '/') || id[0] == '.') {
        loom_error_set(&err, LOOM_ERR_INVALID_REQUEST, "session id \"%s\" is not a name", id);
        api_status_from(st, &err);
        return NULL;
    }
    char *msg = NULL;
    size_t len = 0;
    char *buf = rows->load(rows->ctx, id, &len, &msg);
    int rc = 0;
    if (!buf)
        rc = loom_error_set(&err, LOOM_ERR_IO, "loading the records of session %s: %s", id,
                            msg ? msg : "the store failed");
    else if (len == 0)
        rc = loom_error_set(&err, LOOM_ERR_RESOURCE_NOT_FOUND, "session %s has no records", id);
    free(msg);
    char *path = NULL;
    if (rc == 0) {
        /* This node's working copy, made from the rows; its index (built
         * for another copy) goes with it. */
        char *dir = store_project_dir(agent->cwd);
        loom_str p = LOOM_STR_INIT;
        str_printf(&p, "%s/%s.jsonl", dir, id);
        path = str_steal(&p);
        char *idx = session_index_path(path);
        unlink(idx);
        free(idx);
        rc = file_mkdirs(dir, 0700, &err);
        if (rc == 0)
            rc = file_write_atomic(path, buf, len, 0600, &err);
        free(dir);
    }
    free(buf);
    return open_path_rows(agent, path, rc, &err, rows, st);
}

loom_session *loom_session_resume(loom_agent *agent, const char *id, loom_status *st)
{
    API_CHECK_ARG(st, agent, NULL);
    API_CHECK_ARG(st, id, NULL);
    loom_error err;
    char *path = NULL;
    int rc = session_find(id, &path, &err);
    return open_path(agent, path, rc, &err, st);
}

loom_session *loom_session_continue(loom_agent *agent, loom_status *st)
{
    API_CHECK_ARG(st, agent, NULL);
    loom_error err;
    char *path = NULL;
    int rc = session_latest(agent->cwd, &path, &err);
    return open_path(agent, path, rc, &err, st);
}

/* A fork keeps the right to rewind the edits made before it: the backups
 * the snapshots name are hard-linked (copied where links fail) into the new
 * session's file-history folder. */
static void share_backups(const char *from, const char *to)
{
    DIR *d = opendir(from);
    if (!d)
        return;
    loom_error ignore;
    file_mkdirs(to, 0700, &ignore);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char src[4096], dst[4096];
        snprintf(src, sizeof src, "%s/%s", from, e->d_name);
        snprintf(dst, sizeof dst, "%s/%s", to, e->d_name);
        if (link(src, dst) == 0)
            continue;
        char *data = NULL;
        size_t len = 0;
        if (file_read_all(src, &data, &len, &ignore) == 0)
            file_write_atomic(dst, data, len, 0600, &ignore);
        free(data);
    }
    closedir(d);
}

loom_session *loom_session_fork(loom_session *s, loom_status *st)
{
    API_CHECK_ARG(st, s, NULL);
    loom_error err;
    char *dir = store_project_dir(s->agent->cwd);
    transcript *t = transcript_fork(s->t, dir, &err);
    free(dir);
    if (!t) {
        api_status_from(st, &err);
        return NULL;
    }
    loom_session *fork = wrap(s->agent, t, st);
    if (!fork)
        return NULL;
    if (file_history_dir(s->history) && file_history_dir(fork->history)) {
        share_backups(file_history_dir(s->history), file_history_dir(fork->history));
        /* Reload now that the backups are in place. */
        file_history_free(fork->history);
        fork->history = file_history_new(transcript_session_id(t));
        load_file_history(fork->history, t);
    }
    api_status_ok(st);
    return fork;
}

const char *loom_session_id(const loom_session *s)
{
    return s ? transcript_session_id(s->t) : NULL;
}

const char *loom_session_path(const loom_session *s)
{
    return s ? transcript_path(s->t) : NULL;
}

/* The transcript's, then the settings files' (base/settings.h), then the
 * trust notices. */
size_t loom_session_warning_count(const loom_session *s)
{
    if (!s)
        return 0;
    return transcript_n_warnings(s->t) + json_array_size(s->agent->warnings) +
           json_array_size(s->agent->notices);
}

const char *loom_session_warning(const loom_session *s, size_t i)
{
    if (!s)
        return NULL;
    size_t n = transcript_n_warnings(s->t);
    if (i < n)
        return transcript_warning(s->t, i);
    i -= n;
    n = json_array_size(s->agent->warnings);
    if (i < n)
        return json_string_value(json_array_get(s->agent->warnings, i));
    return json_string_value(json_array_get(s->agent->notices, i - n));
}

/* A prompt the user typed (not a tool result, note or interruption). */
static bool is_user_turn(const json_t *rec)
{
    return record_is_user_message(rec) && !record_skip_run(rec) && !record_resume_note(rec);
}

bool api_session_has_goal(loom_session *s)
{
    size_t n = transcript_count(s->t);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(transcript_record_type(s->t, i), RECORD_MESSAGE) != 0)
            continue; /* by type first: only messages are read from the file */
        const json_t *rec = transcript_record(s->t, i);
        if (record_is_user_message(rec) && !record_skip_run(rec))
            return true;
    }
    return false;
}

int loom_session_rewind(loom_session *s, int n_turns, char **report, loom_status *st)
{
    if (report)
        *report = NULL;
    API_CHECK_ARG(st, s, -1);
    if (n_turns < 1)
        return api_status_set(st, LOOM_ERR_INVALID_REQUEST, "rewind needs at least one turn");
    json_t **chain = NULL;
    size_t n = 0;
    loom_error err;
    if (transcript_chain(s->t, NULL, false, &chain, &n, &err) != 0) {
        api_status_from(st, &err);
        return -1;
    }
    size_t target = n;
    int seen = 0;
    for (size_t i = n; i-- > 0;)
        if (is_user_turn(chain[i]) && ++seen == n_turns) {
            target = i;
            break;
        }
    if (target == n) {
        free(chain);
        return api_status_set(st, LOOM_ERR_RESOURCE_NOT_FOUND,
                              "the conversation has only %d turn(s) to rewind", seen);
    }
    loom_str out = LOOM_STR_INIT;
    int rc = 0;
    /* Files: undo every write made by replies from that turn on. */
    if (target + 1 < n) {
        const char *first_reply = record_id(chain[target + 1]);
        if (first_reply && file_history_rewind(s->history, first_reply, &out, &err) != 0)
            rc = -1;
    }
    /* Conversation: continue from just before that turn; nothing is deleted. */
    const char *parent = record_parent_id(chain[target]);
    if (rc == 0 && transcript_set_leaf(s->t, parent, &err) != 0)
        rc = -1;
    free(chain);
    if (rc != 0) {
        str_free(&out);
        api_status_from(st, &err);
        return -1;
    }
    if (!out.len)
        str_puts(&out, "No files needed restoring.");
    if (report)
        *report = str_steal(&out);
    else
        str_free(&out);
    api_status_ok(st);
    return 0;
}

void api_session_io(loom_session *s, loop_io *io)
{
    memset(io, 0, sizeof *io);
    io->t = s->t;
    io->gov = s->gov;
    io->working = s->working;
    io->mf_dir = s->mf_dir;
    io->context = &s->context;
}

/* A helper call's cost: the agent's configured prices when it has them,
 * else the price table's for the model the call went to; -1: unknown. */
static double helper_cost(loom_session *s, const helper_record *rec)
{
    const loop_params *p = &s->agent->params;
    model_price price;
    if (p->price_input_per_mtok > 0 || p->price_output_per_mtok > 0)
        price = (model_price){.input = p->price_input_per_mtok,
                              .output = p->price_output_per_mtok,
                              .cache_write = p->price_input_per_mtok * 1.25,
                              .cache_read = p->price_input_per_mtok * 0.1,
                              .cache_write_1h = p->price_input_per_mtok * 2.0};
    else if (!api_agent_price(s->agent, rec->model, &price))
        return -1;
    const msg_usage *u = &rec->usage;
    return model_price_cost(&price, u->input_tokens, u->output_tokens, u->cache_creation_tokens,
                            u->cache_read_tokens, u->cache_creation_1h_tokens);
}

/* A helper call outside a run: its tokens the session's. */
static double account_outside_run(void *ctx, const helper_record *rec)
{
    loom_session *s = ctx;
    if (!rec->counted)
        api_session_add_usage(s, &rec->usage);
    return helper_cost(s, rec);
}

typedef struct run_tail {
    loom_session *s;
    loop_result *res;
} run_tail;

/* A helper call a run made after its loop (memory extraction): its tokens
 * and cost the run's result, which the session then adds up. */
static double account_run_tail(void *ctx, const helper_record *rec)
{
    run_tail *t = ctx;
    double cost = helper_cost(t->s, rec);
    bool made = !strcmp(rec->status, "ok") || !strcmp(rec->status, "error");
    if (rec->counted || !made)
        return cost;
    msg_usage_add(&t->res->usage, &rec->usage);
    if (t->res->cost_usd >= 0) {
        if (cost >= 0)
            t->res->cost_usd += cost;
        else if (msg_usage_total(&rec->usage) > 0)
            t->res->cost_usd = -1; /* a model with no price: the run's cost is unknown */
    }
    return cost;
}

void api_session_settle_run_tail(loom_session *s, const char *run_id, loop_result *res)
{
    run_tail t = {s, res};
    governance_settle_helpers(s->gov, s->t, run_id, account_run_tail, &t);
}

void api_session_settle_helpers(loom_session *s, const char *run_id)
{
    governance_settle_helpers(s->gov, s->t, run_id, account_outside_run, s);
}

void api_session_add_usage(loom_session *s, const msg_usage *u)
{
    pthread_mutex_lock(&s->lock);
    msg_usage_add(&s->usage, u);
    pthread_mutex_unlock(&s->lock);
}

char *loom_session_usage_json(loom_session *s)
{
    if (!s)
        return NULL;
    pthread_mutex_lock(&s->lock);
    json_t *u = msg_usage_to_json(&s->usage);
    pthread_mutex_unlock(&s->lock);
    char *text = json_dumps(u, JSON_COMPACT);
    json_decref(u);
    return text;
}

void loom_session_free(loom_session *s)
{
    if (!s)
        return;
    loom_error ignore;
    transcript_sync(s->t, &ignore);
    if (s->gov && hook_registry_count(s->gov->hooks, HOOK_SESSION_END) > 0) {
        hook_outcome o = governance_fire(s->gov, HOOK_SESSION_END,
                                         json_pack("{s:s}", "reason", "exit"), NULL);
        hook_outcome_free(&o);
    }
    /* Sub-agents first: their MCP clones call back into the session's
     * manager host, their shells and threads end before what they borrow.
     * Background agents are external tasks of the session's registry:
     * freeing it stops each and waits for it (agents/background.c keeps
     * their state until agents_session_free), so it goes before. */
    if (s->agents) {
        task_registry_free(s->tasks);
        s->tasks = NULL;
    }
    agents_session_free(s->agents);
    s->agents = NULL;
    /* Before the tasks: no server process outlives the session. */
    api_mcp_close(s);
    api_ext_close(s);
    api_memory_close(s);
    task_registry_free(s->tasks);
    context_state_free(&s->context);
    working_free(s->working);
    free(s->mf_dir);
    todo_list_free(s->todos);
    task_list_free(s->task_list);
    api_worktree_free(s);
    governance_free(s->gov);
    helper_router_free(s->helpers); /* after everything that could still call through it */
    file_history_free(s->history);
    file_state_free(s->files);
    transcript_free(s->t);
    msg_usage_free(&s->usage);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* ---- listing and titles (docs/session-format.md, "Titles") ---------------- */

char *loom_sessions_json(loom_agent *agent, const char *keep_id)
{
    if (!agent)
        return NULL;
    json_t *arr = session_list(agent->cwd, keep_id);
    char *text = json_dump_compact(arr);
    json_decref(arr);
    return text;
}

void api_session_title(loom_session *s, const char *goal)
{
    size_t n = transcript_count(s->t);
    const json_t *first = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *type = transcript_record_type(s->t, i);
        if (!strcmp(type, RECORD_TITLE) || !strcmp(type, RECORD_CUSTOM_TITLE))
            return; /* titled already: the first prompt named it */
        /* By type first: only messages are read from the file. */
        if (!first && !strcmp(type, RECORD_MESSAGE) && is_user_turn(transcript_record(s->t, i)))
            first = transcript_record(s->t, i);
    }
    /* A session written before titles existed is named by its own first
     * prompt, not by the one that continues it. */
    char *text = first ? record_message_text(first) : NULL;
    char *title = session_title_from_prompt(text && *text ? text : goal);
    free(text);
    if (!title)
        return;
    loom_error ignore;
    transcript_append_new(s->t, record_title(title, "first-prompt"), &ignore);
    free(title);
}

static void add_entry(json_t *arr, const char *kind, const char *text)
{
    json_t *o = json_pack("{s:s}", "kind", kind);
    if (text)
        json_set_str(o, "text", text);
    json_array_append_new(arr, o);
}

static size_t count_images(const json_t *rec)
{
    size_t k, n = 0;
    json_t *b;
    json_array_foreach(json_get_arr(rec, "content"), k, b)
        n += !strcmp(json_get_str(b, "type", ""), "image");
    return n;
}

static char *conversation_of(transcript *t);

char *loom_session_conversation_json(loom_session *s)
{
    return s ? conversation_of(s->t) : NULL;
}

char *loom_conversation_json_of_jsonl(const char *jsonl, size_t len, const char *name)
{
    if (!jsonl)
        return NULL;
    transcript *t = transcript_parse(jsonl, len, name);
    char *out = conversation_of(t);
    transcript_free(t);
    return out;
}

static char *conversation_of(transcript *t)
{
    json_t **chain = NULL;
    size_t n = 0;
    loom_error ignore;
    json_t *arr = json_array();
    if (transcript_chain(t, NULL, false, &chain, &n, &ignore) != 0)
        n = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *rec = chain[i];
        const char *type = record_type(rec);
        if (!type || record_skip_run(rec))
            continue;
        if (!strcmp(type, RECORD_MESSAGE)) {
            char *text = record_message_text(rec);
            bool user = record_is_user_message(rec);
            size_t images = user ? count_images(rec) : 0;
            if ((text && *text) || images) {
                add_entry(arr, user ? (record_resume_note(rec) ? "resume_note" : "user")
                                    : "assistant",
                          text ? text : "");
                if (images)
                    json_object_set_new(json_array_get(arr, json_array_size(arr) - 1), "images",
                                        json_integer((json_int_t)images));
            }
            free(text);
        } else if (!strcmp(type, RECORD_FUNCTION_CALL)) {
            json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s}", "kind", "tool_call",
                                                 "name", json_get_str(rec, "name", "?"), "input",
                                                 json_get_str(rec, "arguments", "{}"), "call_id",
                                                 json_get_str(rec, "callId", "")));
        } else if (!strcmp(type, RECORD_FUNCTION_CALL_RESULT)) {
            /* notStarted: the call was stopped before it ran (pipeline.c). */
            json_t *pd = record_provider_data((json_t *)rec, false);
            json_t *raw = json_object_get(json_object_get(pd, "toolResult"), "rawResponse");
            json_t *e = json_pack("{s:s,s:s,s:b,s:s}", "kind", "tool_result", "text",
                                  json_get_str(rec, "output", ""), "is_error",
                                  json_get_bool(rec, "isError", false), "call_id",
                                  json_get_str(rec, "callId", ""));
            if (json_is_true(json_object_get(raw, "notStarted")))
                json_object_set_new(e, "not_started", json_true());
            json_array_append_new(arr, e);
        } else if (!strcmp(type, RECORD_SUMMARY)) {
            add_entry(arr, "summary", json_get_str(rec, "summary", ""));
        }
    }
    free(chain);
    char *text = json_dump_compact(arr);
    json_decref(arr);
    return text;
}

void api_session_tool_ports(loom_session *s, tool_ctx *tctx)
{
    tctx->task_list = s->task_list;
    tctx->mode = s->gov ? &s->gov->mode : NULL;
    if (s->mcp) {
        tctx->mcp_call = api_mcp_tool_call;
        tctx->mcp_ctx = s;
    }
}
