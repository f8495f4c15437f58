/* slash_mcp.c — /mcp and the MCP start-up question (see slash_mcp.h). */
#include "surfaces/cli/slash_mcp.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/termsafe.h"

static json_t *status(slash_host *h)
{
    char *text = loom_session_mcp_status_json(h->session);
    loom_error ignore;
    json_t *st = text ? json_parse(text, strlen(text), "mcp status", &ignore) : NULL;
    free(text);
    return st ? st : json_array();
}

static void show(slash_host *h)
{
    json_t *st = status(h);
    if (json_array_size(st) == 0) {
        term_printf(&h->out, TONE_DIM,
                    "No MCP servers. Add one with `loom mcp add`, or in .mcp.json (docs/mcp.md).\n");
        json_decref(st);
        return;
    }
    term_printf(&h->out, TONE_BOLD, "MCP servers\n");
    size_t i;
    json_t *s;
    json_array_foreach(st, i, s) {
        const char *state = json_get_str(s, "state", "?");
        term_tone tone = !strcmp(state, "connected") ? TONE_GREEN
                         : !strcmp(state, "failed")  ? TONE_RED
                                                     : TONE_YELLOW;
        char *name = termsafe_dup(json_get_str(s, "name", "?"));
        term_printf(&h->out, TONE_PLAIN, "  %-18s ", name);
        term_printf(&h->out, tone, "%-15s", state);
        term_printf(&h->out, TONE_DIM, " %s \xc2\xb7 %s", json_get_str(s, "transport", ""),
                    json_get_str(s, "scope", ""));
        if (!strcmp(state, "connected"))
            term_printf(&h->out, TONE_DIM, " \xc2\xb7 %lld tools, %lld resources, %lld prompts",
                        (long long)json_get_int(s, "tools", 0),
                        (long long)json_get_int(s, "resources", 0),
                        (long long)json_get_int(s, "prompts", 0));
        term_printf(&h->out, TONE_PLAIN, "\n");
        char *err = termsafe_dup(json_get_str(s, "error", ""));
        if (*err)
            term_printf(&h->out, TONE_RED, "    %s\n", err);
        free(err);
        if (!strcmp(state, "needs-approval"))
            term_printf(&h->out, TONE_DIM, "    /mcp approve %s starts it and remembers the answer\n",
                        name);
        free(name);
    }
    term_printf(&h->out, TONE_DIM, "/mcp reconnect NAME connects a server again\n");
    json_decref(st);
}

void slash_mcp(slash_host *h, const char *args)
{
    loom_status st;
    if (!*args) {
        show(h);
    } else if (!strncmp(args, "reconnect ", 10) || !strncmp(args, "approve ", 8)) {
        bool approve = args[0] == 'a';
        const char *name = args + (approve ? 8 : 10);
        name += strspn(name, " ");
        if (h->ops->busy_begin)
            h->ops->busy_begin(h, approve ? "Starting\xe2\x80\xa6" : "Connecting\xe2\x80\xa6");
        int rc = approve ? loom_session_mcp_approve(h->session, name, &st)
                         : loom_session_mcp_reconnect(h->session, name, &st);
        if (approve && rc == 0)
            loom_session_mcp_wait(h->session, 30000);
        if (h->ops->busy_end)
            h->ops->busy_end(h);
        if (rc != 0)
            term_printf(&h->out, TONE_RED, "%s\n", st.message);
        else
            show(h);
    } else {
        term_printf(&h->out, TONE_YELLOW,
                    "usage: /mcp shows the servers; /mcp reconnect NAME; /mcp approve NAME\n");
    }
}

void slash_mcp_ask_approvals(slash_host *h, char *(*ask)(void *ctx, const char *prompt),
                             void *ctx)
{
    json_t *st = status(h);
    size_t i;
    json_t *s;
    json_array_foreach(st, i, s) {
        if (strcmp(json_get_str(s, "state", ""), "needs-approval") != 0)
            continue;
        char *name = termsafe_dup(json_get_str(s, "name", "?"));
        char *source = termsafe_dup(json_get_str(s, "source", ".mcp.json"));
        char *target = termsafe_dup(json_get_str(s, "target", ""));
        if (!strcmp(json_get_str(s, "scope", ""), "plugin"))
            term_printf(&h->out, TONE_YELLOW,
                        "The %s brings the MCP server \"%s\" (%s), and this workspace is not "
                        "trusted. Start it? It runs with your rights.\n",
                        source, name, json_get_str(s, "transport", ""));
        else
            term_printf(&h->out, TONE_YELLOW,
                        "This project's %s names the MCP server \"%s\" (%s). Start it? It runs "
                        "with your rights.\n",
                        source, name, json_get_str(s, "transport", ""));
        term_printf(&h->out, TONE_DIM, "  %s\n", target);
        free(source);
        free(target);
        char *line = ask(ctx, "  [y/N] ");
        bool yes = line && (line[0] == 'y' || line[0] == 'Y');
        free(line);
        loom_status ls;
        if (yes && loom_session_mcp_approve(h->session, json_get_str(s, "name", ""), &ls) != 0)
            term_printf(&h->out, TONE_RED, "%s\n", ls.message);
        else if (!yes)
            term_printf(&h->out, TONE_DIM, "  not started (/mcp approve %s starts it later)\n",
                        name);
        free(name);
    }
    json_decref(st);
}

bool slash_is_mcp_prompt(const char *line)
{
    return !strncmp(line, "/mcp__", 6);
}
