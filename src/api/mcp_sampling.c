/* mcp_sampling.c — an MCP server's sampling/createMessage, served by the
 * agent's own model.
 *
 * Off unless the user's own settings (~/.loom/settings.json, never a
 * project's) say "mcpSampling": true: a server asking for completions
 * spends the user's tokens. When on, each request is one non-streaming call
 * of the agent's provider, its usage added to the session's (and refused
 * once the session has used the configured token budget), and one audit
 * entry per request (tool "mcp__<server>__sampling", the request digested).
 * Threading: a client's thread of the manager; the session's usage is
 * locked, the audit log is thread-safe.
 */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/json.h"
#include "base/str.h"
#include "governance/governance.h"

/* The most tokens one sampling request may ask for. */
#define MCP_SAMPLING_MAX_TOKENS 8192

bool api_mcp_sampling_enabled(const loom_agent *a)
{
    return json_is_true(json_object_get(a->files[0], "mcpSampling"));
}

static void audit(loom_session *s, const char *server, const json_t *params, bool allowed,
                  const char *why)
{
    governance *g = s->gov;
    if (!g || !g->audit)
        return;
    loom_str tool = LOOM_STR_INIT;
    str_printf(&tool, "mcp__%s__sampling", server);
    perm_decision d = {.verdict = allowed ? PERM_ALLOW : PERM_DENY, .source = PERM_SRC_SETTINGS,
                       .row = "settings.mcpSampling"};
    snprintf(d.reason, sizeof d.reason, "%s", why);
    audit_entry e = {.session_id = g->session_id, .tool = str_cstr(&tool), .input = params,
                     .mode = g->mode.mode, .decision = &d};
    audit_record(g->audit, &e);
    str_free(&tool);
}

/* A sampling message's text (text content only; images are described). */
static const char *content_text(const json_t *c, loom_str *buf)
{
    const char *type = json_get_str(c, "type", "");
    if (!strcmp(type, "text"))
        return json_get_str(c, "text", "");
    str_clear(buf);
    str_printf(buf, "[%s content: %s]", type, json_get_str(c, "mimeType", "?"));
    return str_cstr(buf);
}

json_t *api_mcp_sample(loom_session *s, const char *server, const json_t *params, char **why)
{
    loom_agent *a = s->agent;
    int64_t cap = a->params.max_tokens_total;
    pthread_mutex_lock(&s->lock);
    int64_t used = msg_usage_total(&s->usage);
    pthread_mutex_unlock(&s->lock);
    if (cap > 0 && used >= cap) {
        *why = xstrdup("the session's token budget is spent");
        audit(s, server, params, false, *why);
        return NULL;
    }
    const json_t *msgs = json_object_get(params, "messages");
    if (!json_is_array(msgs) || json_array_size(msgs) == 0) {
        *why = xstrdup("sampling/createMessage needs messages");
        return NULL;
    }
    msg_request req;
    memset(&req, 0, sizeof req);
    req.model = xstrdup(a->provider.model);
    const char *sys = json_get_str(params, "systemPrompt", NULL);
    req.system = sys ? xstrdup(sys) : NULL;
    long max = (long)json_get_int(params, "maxTokens", 1024);
    req.max_tokens = (int)(max < 1 ? 1 : max > MCP_SAMPLING_MAX_TOKENS ? MCP_SAMPLING_MAX_TOKENS
                                                                       : max);
    req.temperature = -1;
    loom_str buf = LOOM_STR_INIT;
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m) {
        const char *role = json_get_str(m, "role", "user");
        msg_message *mm = msg_request_add_message(
            &req, !strcmp(role, "assistant") ? MSG_ROLE_ASSISTANT : MSG_ROLE_USER);
        const json_t *c = json_object_get(m, "content");
        if (json_is_array(c)) {
            size_t k;
            json_t *part;
            json_array_foreach(c, k, part)
                msg_message_add_text(mm, content_text(part, &buf));
        } else {
            msg_message_add_text(mm, content_text(c, &buf));
        }
    }
    str_free(&buf);
    provider_config one = a->provider;
    one.stream = false;
    msg_response resp;
    memset(&resp, 0, sizeof resp);
    loom_error err;
    json_t *result = NULL;
    if (provider_complete(&one, &req, NULL, NULL, &resp, &err) != 0) {
        *why = xstrdup(err.message);
        audit(s, server, params, false, err.message);
    } else {
        api_session_add_usage(s, &resp.usage);
        char *text = msg_message_text(&resp.message);
        result = json_pack("{s:s,s:{s:s,s:s},s:s,s:s}", "role", "assistant", "content", "type",
                           "text", "text", text ? text : "", "model",
                           resp.model ? resp.model : a->provider.model, "stopReason",
                           resp.stop_reason == LOOM_STOP_MAX_TOKENS ? "maxTokens" : "endTurn");
        free(text);
        audit(s, server, params, true, "mcpSampling is on in the user's settings");
    }
    msg_response_free(&resp);
    msg_request_free(&req);
    return result;
}
