/* slash_agents.c — /agents and /cost's per-agent rows (see slash_agents.h).
 * Names, descriptions and results come from agent files and the model:
 * each is cut to its line and shown terminal-safe (term_put_clipped,
 * term_printf). */
#include "surfaces/cli/slash_agents.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "surfaces/cli/slash.h"
#include "surfaces/cli/spinner.h"

/* A loom.h JSON answer parsed, or NULL with the status shown. */
static json_t *parse_answer(slash_host *h, char *text, const loom_status *st)
{
    if (!text) {
        term_printf(&h->out, TONE_YELLOW, "%s\n", st->message);
        return NULL;
    }
    loom_error ignore;
    json_t *doc = json_parse(text, strlen(text), "agents", &ignore);
    free(text);
    return doc;
}

/* One line of text from outside, cut to room columns, in tone. */
static void put_cut(slash_host *h, term_tone tone, const char *s, int room)
{
    loom_str line = LOOM_STR_INIT, out = LOOM_STR_INIT;
    term_put_clipped(&line, s, strlen(s), room < 10 ? 10 : room);
    term_put_tone(&h->out, &out, tone, line.ptr, line.len);
    term_write(&h->out, str_cstr(&out), out.len);
    str_free(&line);
    str_free(&out);
}

static void show_catalog(slash_host *h)
{
    loom_status st;
    json_t *doc = parse_answer(h, loom_agent_agents_catalog_json(h->agent, &st), &st);
    if (!doc)
        return;
    term_printf(&h->out, TONE_BOLD, "Agents the Agent tool can spawn\n");
    size_t i;
    json_t *d;
    json_array_foreach(json_get_arr(doc, "agents"), i, d) {
        const char *source = json_get_str(d, "source", "built-in");
        char *name = xstrdup(json_get_str(d, "name", "?"));
        term_printf(&h->out, TONE_PLAIN, "  %-20s ", name);
        /* A file's path reads better inside the workspace. */
        size_t n = strlen(h->cwd);
        if (!strncmp(source, h->cwd, n) && source[n] == '/')
            source += n + 1;
        term_printf(&h->out, TONE_DIM, "%-28s ", source);
        put_cut(h, TONE_PLAIN, json_get_str(d, "description", ""), term_columns() - 52);
        term_printf(&h->out, TONE_PLAIN, "\n");
        free(name);
    }
    json_array_foreach(json_get_arr(doc, "warnings"), i, d) {
        term_printf(&h->out, TONE_YELLOW, "  \xe2\x9a\xa0 ");
        put_cut(h, TONE_YELLOW, json_string_value(d) ? json_string_value(d) : "",
                term_columns() - 6);
        term_printf(&h->out, TONE_PLAIN, "\n");
    }
    json_decref(doc);
}

static void seconds(long long ms, char *buf, size_t size)
{
    if (ms >= 60000)
        snprintf(buf, size, "%lldm %02llds", ms / 60000, ms / 1000 % 60);
    else
        snprintf(buf, size, "%.1fs", (double)ms / 1000.0);
}

static json_t *session_agents(slash_host *h)
{
    loom_status st;
    return parse_answer(h, loom_session_agents_json(h->session, &st), &st);
}

/* One row: id · name (type) · state · tool · tokens · time. */
static void agent_row(slash_host *h, const json_t *a)
{
    const char *state = json_get_str(a, "state", "?");
    bool running = !strcmp(state, "running");
    /* An agent whose run ended well waits, resumable by SendMessage: to the
     * person it has completed. */
    if (!strcmp(state, "idle"))
        state = "completed";
    int64_t depth = json_get_int(a, "depth", 1);
    char tokens[32], when[32];
    spinner_format_count(json_get_int(a, "tokens", 0), tokens, sizeof tokens);
    seconds(json_get_int(a, "elapsed_ms", 0), when, sizeof when);
    loom_str line = LOOM_STR_INIT;
    for (int64_t d = 1; d < depth && d < 8; d++)
        str_puts(&line, "  ");
    const char *name = json_get_str(a, "name", ""), *type = json_get_str(a, "agent_type", "");
    str_printf(&line, "%s %s", json_get_str(a, "agent_id", "?"), *name ? name : type);
    if (*name && *type && strcmp(type, name) != 0)
        str_printf(&line, " (%s)", type);
    str_printf(&line, " \xc2\xb7 %s%s", state, json_get_bool(a, "background", false) ? " (background)" : "");
    const char *tool = json_get_str(a, "tool", "");
    if (running && *tool)
        str_printf(&line, " \xc2\xb7 %s", tool);
    str_printf(&line, " \xc2\xb7 %s tokens \xc2\xb7 %s", tokens, when);
    term_printf(&h->out, TONE_PLAIN, "  ");
    put_cut(h, running ? TONE_GREEN : TONE_PLAIN, line.ptr, term_columns() - 3);
    term_printf(&h->out, TONE_PLAIN, "\n");
    str_free(&line);
}

static void show_running(slash_host *h)
{
    loom_status st;
    char *text = loom_session_agents_json(h->session, &st);
    if (!text)
        return; /* agents are off: the catalog call said so already */
    json_t *list = parse_answer(h, text, &st);
    term_printf(&h->out, TONE_BOLD, "This session's agents\n");
    if (json_array_size(list) == 0)
        term_printf(&h->out, TONE_DIM, "  (none yet)\n");
    size_t i;
    json_t *a;
    json_array_foreach(list, i, a)
        agent_row(h, a);
    if (json_array_size(list) > 0)
        term_printf(&h->out, TONE_DIM, "/agents show ID \xc2\xb7 /agents stop ID \xc2\xb7 "
                    "/agents merge (worktree agents' changes)\n");
    json_decref(list);
}

static void show_one(slash_host *h, const char *id)
{
    json_t *list = session_agents(h);
    if (!list)
        return;
    size_t i, len = strlen(id);
    json_t *a, *found = NULL;
    int matches = 0;
    /* A unique prefix will do, as for /resume. */
    json_array_foreach(list, i, a) {
        const char *aid = json_get_str(a, "agent_id", "");
        if (!strcmp(aid, id)) {
            found = a;
            matches = 1;
            break;
        }
        if (!strncmp(aid, id, len)) {
            found = a;
            matches++;
        }
    }
    if (matches != 1) {
        term_printf(&h->out, TONE_YELLOW, "%s agent %s in this session (/agents lists them)\n",
                    matches ? "More than one" : "No", id);
        json_decref(list);
        return;
    }
    agent_row(h, found);
    const char *transcript = json_get_str(found, "transcript", "");
    if (*transcript)
        term_printf(&h->out, TONE_DIM, "  transcript %s\n", transcript);
    const json_t *wt = json_get_obj(found, "worktree");
    if (wt)
        term_printf(&h->out, TONE_DIM, "  worktree %s \xc2\xb7 branch %s\n",
                    json_get_str(wt, "path", "?"), json_get_str(wt, "branch", "?"));
    double cost = json_get_num(found, "cost_usd", -1);
    if (cost >= 0)
        term_printf(&h->out, TONE_DIM, "  cost $%.4f\n", cost);
    const char *result = json_get_str(found, "result", "");
    if (*result) {
        term_printf(&h->out, TONE_BOLD, "  Result\n");
        /* The result whole, line by line, each made safe. */
        for (const char *s = result; *s;) {
            size_t n = strcspn(s, "\n");
            loom_str line = LOOM_STR_INIT, out = LOOM_STR_INIT;
            str_puts(&out, "    ");
            term_put_clipped(&line, s, n, 0);
            term_put_tone(&h->out, &out, TONE_PLAIN, line.ptr, line.len);
            str_putc(&out, '\n');
            term_write(&h->out, str_cstr(&out), out.len);
            str_free(&line);
            str_free(&out);
            s += n + (s[n] == '\n');
        }
    }
    json_decref(list);
}

static void stop_one(slash_host *h, const char *id)
{
    loom_status st;
    int rc = loom_session_agent_stop(h->session, id, &st);
    if (rc < 0)
        term_printf(&h->out, TONE_RED, "%s\n", st.message);
    else if (rc == 1)
        term_printf(&h->out, TONE_DIM, "Agent %s had already ended.\n", id);
    else
        term_printf(&h->out, TONE_PLAIN, "Stopped agent %s and the agents it started.\n", id);
}

static void merge_list(slash_host *h, const json_t *items, const char *label, term_tone tone)
{
    size_t i;
    json_t *m;
    json_array_foreach(items, i, m) {
        term_printf(&h->out, tone, "  %s %s", label, json_get_str(m, "agent_id", "?"));
        term_printf(&h->out, TONE_DIM, " %s%s%s", json_get_str(m, "branch", ""),
                    json_object_get(m, "reason") ? " \xc2\xb7 " : "", json_get_str(m, "reason", ""));
        size_t k;
        json_t *f;
        json_array_foreach(json_get_arr(m, "files"), k, f)
            term_printf(&h->out, TONE_PLAIN, "%s%s", k ? ", " : ": ",
                        json_string_value(f) ? json_string_value(f) : "");
        term_printf(&h->out, TONE_PLAIN, "\n");
        const char *stat = json_get_str(m, "stat", "");
        for (const char *s = stat; *s;) {
            size_t n = strcspn(s, "\n");
            term_printf(&h->out, TONE_DIM, "    %.*s\n", (int)n, s);
            s += n + (s[n] == '\n');
        }
    }
}

static void merge_all(slash_host *h)
{
    loom_status st;
    if (h->ops->busy_begin)
        h->ops->busy_begin(h, "Merging\xe2\x80\xa6");
    char *text = loom_session_agents_merge(h->session, &st);
    if (h->ops->busy_end)
        h->ops->busy_end(h);
    json_t *report = parse_answer(h, text, &st);
    if (!report)
        return;
    merge_list(h, json_get_arr(report, "merged"), "merged", TONE_GREEN);
    merge_list(h, json_get_arr(report, "conflicts"), "conflict, not merged:", TONE_RED);
    merge_list(h, json_get_arr(report, "skipped"), "skipped", TONE_DIM);
    if (json_array_size(json_get_arr(report, "conflicts")) > 0)
        term_printf(&h->out, TONE_DIM, "Conflicting branches were left as they are; your files "
                    "are unchanged.\n");
    json_decref(report);
}

void slash_agents(slash_host *h, const char *args)
{
    if (!*args || !strcmp(args, "list")) {
        show_catalog(h);
        show_running(h);
    } else if (!strncmp(args, "show ", 5)) {
        show_one(h, args + 5 + strspn(args + 5, " "));
    } else if (!strncmp(args, "stop ", 5)) {
        stop_one(h, args + 5 + strspn(args + 5, " "));
    } else if (!strcmp(args, "merge")) {
        merge_all(h);
    } else {
        term_printf(&h->out, TONE_YELLOW,
                    "usage: /agents lists them; /agents show ID; /agents stop ID; /agents merge\n");
    }
}

void slash_agents_cost(slash_host *h)
{
    if (!h->last_by_agent)
        return;
    loom_error ignore;
    json_t *rows = json_parse(h->last_by_agent, strlen(h->last_by_agent), "usage_by_agent", &ignore);
    if (json_array_size(rows) == 0) {
        json_decref(rows);
        return;
    }
    term_printf(&h->out, TONE_BOLD, "By agent (last run)\n");
    size_t i;
    json_t *a;
    json_array_foreach(rows, i, a) {
        int64_t depth = json_get_int(a, "depth", 0);
        const json_t *u = json_get_obj(a, "usage");
        long long total = (long long)(json_get_int(u, "inputTokens", 0) +
                                      json_get_int(u, "outputTokens", 0) +
                                      json_get_int(u, "cacheReadTokens", 0) +
                                      json_get_int(u, "cacheCreationTokens", 0));
        char tokens[32];
        slash_thousands(total, tokens, sizeof tokens);
        loom_str line = LOOM_STR_INIT;
        for (int64_t d = 0; d < depth && d < 8; d++)
            str_puts(&line, "  ");
        const char *name = json_get_str(a, "name", "");
        const char *type = json_get_str(a, "agent_type", "");
        str_printf(&line, "%s", *name ? name : depth == 0 ? "main" : type);
        if (*type && strcmp(type, name) != 0 && *name)
            str_printf(&line, " (%s)", type);
        str_printf(&line, " \xc2\xb7 %s tokens", tokens);
        if (json_is_number(json_object_get(a, "cost_usd")))
            str_printf(&line, " \xc2\xb7 $%.4f", json_get_num(a, "cost_usd", 0));
        const char *state = json_get_str(a, "state", "");
        if (!strcmp(state, "idle"))
            state = "completed";
        if (*state)
            str_printf(&line, " \xc2\xb7 %s", state);
        term_printf(&h->out, TONE_PLAIN, "  ");
        put_cut(h, TONE_PLAIN, line.ptr, term_columns() - 3);
        term_printf(&h->out, TONE_PLAIN, "\n");
        str_free(&line);
    }
    json_decref(rows);
}
