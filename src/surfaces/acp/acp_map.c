/* acp_map.c — what Loom's run events, conversations and ACP prompts become
 * on the other side (acp.h): pure functions of their input (plus the files
 * an edit touched, read for its diff — from the client's texts when it
 * holds the files, through the map's hooks), so the unit tests drive them
 * with events written by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/acp/acp.h"

/* The most of a file read for a diff, and of Bash output kept per call. */
#define ACP_DIFF_MAX (4u << 20)
#define ACP_OUTPUT_MAX (64u << 10)

/* ---- tools ----------------------------------------------------------------- */

const char *acp_tool_kind(const char *tool)
{
    static const struct {
        const char *tool, *kind;
    } kinds[] = {
        {"Read", "read"},       {"NotebookRead", "read"}, {"TaskOutput", "read"},
        {"Edit", "edit"},       {"MultiEdit", "edit"},    {"Write", "edit"},
        {"NotebookEdit", "edit"}, {"Glob", "search"},     {"Grep", "search"},
        {"LS", "search"},       {"WebSearch", "fetch"},   {"WebFetch", "fetch"},
        {"Bash", "execute"},    {"TaskStop", "execute"},  {"TodoWrite", "think"},
        {"Renew", "think"},     {"AcknowledgeEvent", "think"},
        {"ExitPlanMode", "switch_mode"}, {"EnterPlanMode", "switch_mode"},
    };
    if (!tool)
        return "other";
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].tool, tool) == 0)
            return kinds[i].kind;
    return "other";
}

static const char *input_str(const json_t *input, const char *key)
{
    return json_get_str(input, key, NULL);
}

/* The first line of s, cut to 80 bytes (not inside a UTF-8 sequence). */
static void put_line(loom_str *out, const char *s)
{
    size_t n = strcspn(s, "\n");
    if (n > 80) {
        n = 80;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--;
    }
    str_append(out, s, n);
    if (s[n])
        str_puts(out, "\xe2\x80\xa6");
}

char *acp_tool_title(const char *tool, const json_t *input)
{
    loom_str t = LOOM_STR_INIT;
    const char *name = tool ? tool : "tool";
    const char *path = input_str(input, "file_path");
    if (!path)
        path = input_str(input, "notebook_path");
    const char *cmd = input_str(input, "command");
    const char *pattern = input_str(input, "pattern");
    const char *url = input_str(input, "url");
    const char *query = input_str(input, "query");
    const char *desc = input_str(input, "description");
    if (tool && strcmp(tool, "Bash") == 0 && cmd) {
        str_putc(&t, '`');
        put_line(&t, cmd);
        str_putc(&t, '`');
    } else if (path) {
        str_printf(&t, "%s ", name);
        put_line(&t, path);
    } else if (pattern) {
        str_printf(&t, "%s ", name);
        put_line(&t, pattern);
        const char *in = input_str(input, "path");
        if (in) {
            str_puts(&t, " in ");
            put_line(&t, in);
        }
    } else if (url || query) {
        str_printf(&t, "%s ", name);
        put_line(&t, url ? url : query);
    } else if (desc) {
        str_printf(&t, "%s: ", name);
        put_line(&t, desc);
    } else {
        str_puts(&t, name);
    }
    return str_steal(&t);
}

static char *absolute(const char *path, const char *cwd)
{
    if (!path || !*path)
        return NULL;
    if (path[0] == '/' || !cwd || !*cwd)
        return xstrdup(path);
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s%s%s", cwd, cwd[strlen(cwd) - 1] == '/' ? "" : "/", path);
    return str_steal(&s);
}

char *acp_edit_path(const char *tool, const json_t *input, const char *cwd)
{
    if (!tool || strcmp(acp_tool_kind(tool), "edit") != 0)
        return NULL;
    const char *p = input_str(input, "file_path");
    return absolute(p ? p : input_str(input, "notebook_path"), cwd);
}

json_t *acp_tool_locations(const char *tool, const json_t *input, const char *cwd)
{
    json_t *locs = json_array();
    const char *p = input_str(input, "file_path");
    if (!p)
        p = input_str(input, "notebook_path");
    if (!p && tool && (strcmp(tool, "Grep") == 0 || strcmp(tool, "Glob") == 0))
        p = input_str(input, "path");
    char *abs = absolute(p, cwd);
    if (abs) {
        json_t *loc = json_pack("{s:s}", "path", abs);
        json_int_t line = json_integer_value(json_object_get(input, "offset"));
        if (line > 0 && line < 4294967295LL)
            json_object_set_new(loc, "line", json_integer(line));
        json_array_append_new(locs, loc);
    }
    free(abs);
    return locs;
}

/* ---- the map's calls ---------------------------------------------------------- */

void acp_map_init(acp_map *m, const char *cwd, long context_window)
{
    memset(m, 0, sizeof *m);
    m->cwd = cwd;
    m->context_window = context_window;
}

void acp_map_clear(acp_map *m)
{
    for (size_t i = 0; i < m->n_calls; i++) {
        acp_call *c = &m->calls[i];
        free(c->call_id);
        free(c->tool);
        free(c->path);
        free(c->old_text);
        free(c->output);
    }
    free(m->calls);
    m->calls = NULL;
    m->n_calls = m->cap_calls = 0;
}

acp_call *acp_map_find(acp_map *m, const char *call_id)
{
    if (!call_id)
        return NULL;
    for (size_t i = 0; i < m->n_calls; i++)
        if (strcmp(m->calls[i].call_id, call_id) == 0)
            return &m->calls[i];
    return NULL;
}

static char *read_small(const char *path, bool *exists)
{
    *exists = false;
    struct stat sb;
    if (!path || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) || (size_t)sb.st_size > ACP_DIFF_MAX)
        return NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = xmalloc((size_t)sb.st_size + 1);
    size_t n = fread(buf, 1, (size_t)sb.st_size, f);
    fclose(f);
    buf[n] = '\0';
    if (memchr(buf, '\0', n)) { /* not text: no diff */
        free(buf);
        return NULL;
    }
    *exists = true;
    return buf;
}

/* An edit's file as the diff shows it: the client's text when the client
 * holds the files and has given or taken this one, else the disk's. */
static char *file_text(const acp_map *m, const char *path, bool *exists)
{
    if (m->client_text && path) {
        bool known = false;
        char *t = m->client_text(m->hook_ctx, path, &known);
        if (known) {
            *exists = true;
            return t;
        }
        free(t);
    }
    return read_small(path, exists);
}

static acp_call *add_call(acp_map *m, const char *call_id, const char *tool)
{
    if (m->n_calls == m->cap_calls) {
        m->cap_calls = m->cap_calls ? m->cap_calls * 2 : 8;
        m->calls = xrealloc(m->calls, m->cap_calls * sizeof *m->calls);
    }
    acp_call *c = &m->calls[m->n_calls++];
    memset(c, 0, sizeof *c);
    c->call_id = xstrdup(call_id);
    c->tool = xstrdup(tool ? tool : "");
    return c;
}

acp_call *acp_map_call_for_approval(acp_map *m, const json_t *event)
{
    acp_call *c = acp_map_find(m, json_get_str(event, "correlation_id", NULL));
    if (c)
        return c;
    const char *tool = json_get_str(json_get_obj(event, "payload"), "tool", NULL);
    for (size_t i = m->n_calls; i-- > 0;)
        if (tool && strcmp(m->calls[i].tool, tool) == 0)
            return &m->calls[i];
    return NULL;
}

/* ---- content --------------------------------------------------------------------- */

static json_t *text_block(const char *text)
{
    return json_pack("{s:s, s:s}", "type", "text", "text", text ? text : "");
}

static json_t *text_content(const char *text)
{
    return json_pack("{s:s, s:o}", "type", "content", "content", text_block(text));
}

static json_t *diff_content(const char *path, const char *old_text, const char *new_text)
{
    return json_pack("{s:s, s:s, s:o, s:s}", "type", "diff", "path", path, "oldText",
                     old_text ? json_string(old_text) : json_null(), "newText",
                     new_text ? new_text : "");
}

/* What an edit call proposes, from its input alone (the permission request
 * and tool_call show it before anything is written). */
static json_t *proposed_diff(const acp_call *c, const json_t *input)
{
    if (!c || !c->path)
        return NULL;
    if (strcmp(c->tool, "Write") == 0)
        return diff_content(c->path, c->old_text, input_str(input, "content"));
    const char *o = input_str(input, "old_string"), *n = input_str(input, "new_string");
    if (o && n)
        return diff_content(c->path, o, n);
    return NULL;
}

static json_t *chunk(const char *kind, const char *text)
{
    return json_pack("{s:s, s:o}", "sessionUpdate", kind, "content", text_block(text));
}

/* ---- plan (TodoWrite) ----------------------------------------------------------- */

static json_t *plan_update(const json_t *input)
{
    json_t *entries = json_array();
    size_t i;
    json_t *todo;
    json_array_foreach(json_get_arr(input, "todos"), i, todo) {
        const char *st = json_get_str(todo, "status", "pending");
        if (strcmp(st, "in_progress") != 0 && strcmp(st, "completed") != 0)
            st = "pending";
        const char *pr = json_get_str(todo, "priority", "medium");
        if (strcmp(pr, "high") != 0 && strcmp(pr, "low") != 0)
            pr = "medium";
        json_array_append_new(entries,
                              json_pack("{s:s, s:s, s:s}", "content",
                                        json_get_str(todo, "content", ""), "priority", pr,
                                        "status", st));
    }
    return json_pack("{s:s, s:o}", "sessionUpdate", "plan", "entries", entries);
}

/* ---- events --------------------------------------------------------------------- */

static void on_started(acp_map *m, const json_t *p, json_t *out)
{
    const char *id = json_get_str(p, "call_id", NULL), *tool = json_get_str(p, "tool", NULL);
    const json_t *input = json_object_get(p, "input");
    if (!id || acp_map_find(m, id))
        return;
    acp_call *c = add_call(m, id, tool);
    if (tool && strcmp(tool, "TodoWrite") == 0) {
        c->is_plan = true;
        json_array_append_new(out, plan_update(input));
        return;
    }
    c->path = acp_edit_path(tool, input, m->cwd);
    if (c->path)
        c->old_text = file_text(m, c->path, &c->had_file);
    char *title = acp_tool_title(tool, input);
    json_t *u = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:O}", "sessionUpdate", "tool_call",
                          "toolCallId", id, "title", title, "kind", acp_tool_kind(tool),
                          "status", "pending", "locations",
                          acp_tool_locations(tool, input, m->cwd), "rawInput",
                          input ? input : json_null());
    free(title);
    json_t *d = proposed_diff(c, input);
    if (d)
        json_object_set_new(u, "content", json_pack("[o]", d));
    json_array_append_new(out, u);
    json_array_append_new(out, json_pack("{s:s, s:s, s:s}", "sessionUpdate", "tool_call_update",
                                         "toolCallId", id, "status", "in_progress"));
}

static void on_finished(acp_map *m, const json_t *p, bool failed, json_t *out)
{
    const char *id = json_get_str(p, "call_id", NULL);
    acp_call *c = acp_map_find(m, id);
    if (!id || (c && c->is_plan))
        return;
    bool is_error = failed || json_get_bool(p, "is_error", false);
    json_t *content = json_array();
    if (c && c->path && !is_error) {
        bool exists;
        char *now = file_text(m, c->path, &exists);
        if (exists)
            json_array_append_new(content, diff_content(c->path, c->had_file ? c->old_text : NULL,
                                                        now));
        free(now);
    }
    /* A command the client ran: its terminal stays the content (the
     * client shows it even after it was released). */
    char *terminal = m->client_terminal && c ? m->client_terminal(m->hook_ctx, id) : NULL;
    if (terminal)
        json_array_append_new(content, json_pack("{s:s, s:s}", "type", "terminal", "terminalId",
                                                 terminal));
    free(terminal);
    const char *output = json_get_str(p, "output", NULL);
    if (output && *output && (!json_array_size(content) || is_error))
        json_array_append_new(content, text_content(output));
    json_t *u = json_pack("{s:s, s:s, s:s, s:o}", "sessionUpdate", "tool_call_update",
                          "toolCallId", id, "status", is_error ? "failed" : "completed",
                          "content", content);
    if (json_object_get(p, "raw"))
        json_object_set(u, "rawOutput", json_object_get(p, "raw"));
    json_array_append_new(out, u);
}

/* Bash's live output, the call's text content so far. */
static void on_progress(acp_map *m, const json_t *p, json_t *out)
{
    acp_call *c = acp_map_find(m, json_get_str(p, "call_id", NULL));
    const char *more = json_get_str(p, "output", NULL);
    if (!c || c->is_plan || !more || !*more)
        return;
    size_t n = strlen(more);
    if (c->output_len + n > ACP_OUTPUT_MAX)
        return;
    c->output = xrealloc(c->output, c->output_len + n + 1);
    memcpy(c->output + c->output_len, more, n + 1);
    c->output_len += n;
    json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:[o]}", "sessionUpdate",
                                         "tool_call_update", "toolCallId", c->call_id, "status",
                                         "in_progress", "content", text_content(c->output)));
}

static void on_usage(acp_map *m, const json_t *p, json_t *out)
{
    const json_t *u = json_get_obj(p, "usage");
    if (!u || m->context_window <= 0)
        return;
    /* What the context holds after this reply: its prompt, cached or not,
     * and the reply itself. */
    json_int_t used = json_get_int(u, "inputTokens", 0) + json_get_int(u, "cacheReadTokens", 0) +
                      json_get_int(u, "cacheCreationTokens", 0) +
                      json_get_int(u, "outputTokens", 0);
    json_t *upd = json_pack("{s:s, s:I, s:I}", "sessionUpdate", "usage_update", "used",
                            used < 0 ? (json_int_t)0 : used, "size",
                            (json_int_t)m->context_window);
    double cost = json_get_num(p, "cost_usd", -1);
    if (cost >= 0)
        json_object_set_new(upd, "cost",
                            json_pack("{s:f, s:s}", "amount", cost, "currency", "USD"));
    json_array_append_new(out, upd);
}

void acp_map_event(acp_map *m, const json_t *event, json_t *out)
{
    const char *type = json_get_str(event, "type", "");
    const json_t *p = json_get_obj(event, "payload");
    if (!p)
        return;
    switch (loom_event_type_from_name(type)) {
    case LOOM_EV_TOKEN_DELTA: {
        const char *text = json_get_str(p, "text", NULL);
        if (!text || !*text || json_object_get(p, "agent_id")) /* a sub-agent's own reply */
            return;
        bool thought = strcmp(json_get_str(p, "channel", "text"), "reasoning") == 0;
        json_array_append_new(out, chunk(thought ? "agent_thought_chunk" : "agent_message_chunk",
                                         text));
        return;
    }
    case LOOM_EV_TOOL_STARTED:
        on_started(m, p, out);
        return;
    case LOOM_EV_TOOL_FINISHED:
    case LOOM_EV_TOOL_FAILED:
        on_finished(m, p, strcmp(type, "tool.failed") == 0, out);
        return;
    case LOOM_EV_TOOL_PROGRESS:
        on_progress(m, p, out);
        return;
    case LOOM_EV_MODEL_COMPLETED:
        on_usage(m, p, out);
        return;
    default:
        return;
    }
}

json_t *acp_map_permission_tool_call(acp_map *m, const json_t *event)
{
    const json_t *p = json_get_obj(event, "payload");
    const char *tool = json_get_str(p, "tool", NULL);
    const json_t *input = json_object_get(p, "input");
    acp_call *c = acp_map_call_for_approval(m, event);
    char *title = acp_tool_title(tool, input);
    json_t *tc = json_pack("{s:s, s:s, s:s, s:s, s:o, s:O}", "toolCallId",
                           c ? c->call_id : json_get_str(p, "approval_id", "approval"), "title",
                           title, "kind", acp_tool_kind(tool), "status", "pending", "locations",
                           acp_tool_locations(tool, input, m->cwd), "rawInput",
                           input ? input : json_null());
    free(title);
    json_t *content = json_array();
    json_t *d = proposed_diff(c, input);
    if (d)
        json_array_append_new(content, d);
    const char *q = json_get_str(p, "question", json_get_str(p, "message", NULL));
    if (q && *q)
        json_array_append_new(content, text_content(q));
    /* Why a person is asked, as the REPL shows it under the question
     * (ExitPlanMode: the mode approving its plan restores). */
    const char *why = json_get_str(p, "message", NULL);
    if (why && *why && (!q || strcmp(why, q) != 0))
        json_array_append_new(content, text_content(why));
    json_object_set_new(tc, "content", content);
    return tc;
}

json_t *acp_permission_options(void)
{
    return json_pack("[{s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}, {s:s, s:s, s:s}]",
                     "optionId", "allow_once", "name", "Allow", "kind", "allow_once",
                     "optionId", "allow_always", "name", "Always allow", "kind", "allow_always",
                     "optionId", "reject_once", "name", "Reject", "kind", "reject_once",
                     "optionId", "reject_always", "name", "Always reject", "kind",
                     "reject_always");
}

const char *acp_permission_decision(const char *option_id)
{
    if (!option_id)
        return NULL;
    if (strcmp(option_id, "allow_once") == 0)
        return "allow";
    if (strcmp(option_id, "allow_always") == 0)
        return "allow_always";
    if (strcmp(option_id, "reject_once") == 0 || strcmp(option_id, "reject_always") == 0)
        return "deny";
    return NULL;
}

const char *acp_stop_reason(loom_stop_reason why, loom_run_state state, bool cancelled)
{
    if (cancelled || state == LOOM_RUN_CANCELLED || why == LOOM_STOP_CANCELLED)
        return "cancelled";
    switch (why) {
    case LOOM_STOP_MAX_TOKENS:
    case LOOM_STOP_TOKEN_BUDGET:
        return "max_tokens";
    case LOOM_STOP_MAX_TURNS:
    case LOOM_STOP_USD_BUDGET:
    case LOOM_STOP_BUDGET_SHARE:
    case LOOM_STOP_PAUSED:
        return "max_turn_requests";
    case LOOM_STOP_REFUSAL:
    case LOOM_STOP_PROMPT_BLOCKED:
        return "refusal";
    case LOOM_STOP_EXTERNAL_SIGNAL:
        return "cancelled";
    case LOOM_STOP_MODEL_ERROR:
    case LOOM_STOP_SESSION_ERROR:
        return NULL;
    default:
        break;
    }
    if (state == LOOM_RUN_FAILED || state == LOOM_RUN_BLOCKED_BY_CAPABILITY)
        return NULL;
    return "end_turn";
}

/* ---- replay --------------------------------------------------------------------- */

json_t *acp_replay_updates(const json_t *conversation)
{
    json_t *out = json_array();
    size_t i, n_calls = 0;
    json_t *item;
    char last_call[64] = "";
    json_array_foreach(conversation, i, item) {
        const char *kind = json_get_str(item, "kind", "");
        const char *text = json_get_str(item, "text", "");
        if (strcmp(kind, "user") == 0) {
            json_array_append_new(out, chunk("user_message_chunk", text));
        } else if (strcmp(kind, "assistant") == 0 || strcmp(kind, "summary") == 0) {
            if (*text)
                json_array_append_new(out, chunk("agent_message_chunk", text));
        } else if (strcmp(kind, "tool_call") == 0) {
            const char *name = json_get_str(item, "name", "tool");
            const char *raw = json_get_str(item, "input", "{}");
            json_t *input = json_loads(raw, 0, NULL);
            snprintf(last_call, sizeof last_call, "replay_%zu", ++n_calls);
            char *title = acp_tool_title(name, input);
            json_t *u = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "sessionUpdate", "tool_call",
                                  "toolCallId", last_call, "title", title, "kind",
                                  acp_tool_kind(name), "status", "in_progress", "locations",
                                  acp_tool_locations(name, input, NULL));
            json_object_set_new(u, "rawInput", input ? input : json_string(raw));
            free(title);
            json_array_append_new(out, u);
        } else if (strcmp(kind, "tool_result") == 0 && *last_call) {
            bool err = json_get_bool(item, "is_error", false);
            json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:[o]}", "sessionUpdate",
                                                 "tool_call_update", "toolCallId", last_call,
                                                 "status", err ? "failed" : "completed",
                                                 "content", text_content(text)));
        }
    }
    return out;
}

/* ---- commands --------------------------------------------------------------------- */

static void add_command(json_t *cmds, const json_t *def)
{
    const char *name = json_get_str(def, "name", NULL);
    if (!name || !*name)
        return;
    size_t i;
    json_t *c;
    json_array_foreach(cmds, i, c)
        if (strcmp(json_get_str(c, "name", ""), name) == 0)
            return; /* a skill and a command of one name: the skill (listed first) wins */
    json_t *cmd = json_pack("{s:s, s:s}", "name", name, "description",
                            json_get_str(def, "description", ""));
    const char *hint = json_get_str(def, "argument_hint", NULL);
    if (hint && *hint)
        json_object_set_new(cmd, "input", json_pack("{s:s}", "hint", hint));
    json_array_append_new(cmds, cmd);
}

json_t *acp_commands_from_extensions(const json_t *ext)
{
    json_t *cmds = json_array();
    size_t i;
    json_t *d;
    json_array_foreach(json_get_arr(ext, "skills"), i, d)
        if (json_get_bool(d, "user_invocable", true))
            add_command(cmds, d);
    json_array_foreach(json_get_arr(ext, "commands"), i, d)
        add_command(cmds, d);
    return cmds;
}

void acp_commands_add_mcp_prompts(json_t *cmds, const json_t *prompts)
{
    size_t i, j;
    json_t *p, *arg;
    json_array_foreach(prompts, i, p) {
        const char *cmd = json_get_str(p, "command", NULL);
        if (!cmd || !*cmd)
            continue;
        loom_str hint = LOOM_STR_INIT;
        json_array_foreach(json_get_arr(p, "arguments"), j, arg) {
            const char *name = json_get_str(arg, "name", NULL);
            if (name)
                str_printf(&hint, "%s%s", hint.len ? " " : "", name);
        }
        json_t *def = json_pack("{s:s, s:s}", "name", cmd, "description",
                                json_get_str(p, "description", ""));
        if (hint.len)
            json_object_set_new(def, "argument_hint", json_string(str_cstr(&hint)));
        str_free(&hint);
        add_command(cmds, def);
        json_decref(def);
    }
}
