/* agents_fixture.h — the main run the sub-agent unit tests spawn under: a
 * transcript in a temporary folder, the built-in tools plus Agent, a fake
 * model ("answer N" to the N-th call, 10 + 5 tokens each, the last
 * request's system prompt and message count kept), and an agents session
 * attached as run "run-1". No HTTP, no governance (tool_ctx.gov NULL).
 * Included by one test file each (static functions). */
#ifndef LOOM_TESTS_AGENTS_FIXTURE_H
#define LOOM_TESTS_AGENTS_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/agents.h"
#include "agents/tree.h"
#include "runtime/loop.h"
#include "session/transcript.h"
#include "tools/registry.h"

typedef struct fake {
    int calls;
    size_t last_messages;    /* messages in the last request */
    char *last_system;
} fake;

static int fake_complete(void *ctx, const provider_config *cfg, const msg_request *req,
                         const provider_stream_sink *sink, const loom_cancel *cancel,
                         msg_response *out, loom_error *err)
{
    (void)cfg, (void)sink, (void)cancel, (void)err;
    fake *f = ctx;
    f->calls++;
    f->last_messages = req->n_messages;
    free(f->last_system);
    f->last_system = strdup(req->system ? req->system : "");
    memset(out, 0, sizeof *out);
    out->message.role = MSG_ROLE_ASSISTANT;
    char text[64];
    snprintf(text, sizeof text, "answer %d", f->calls);
    msg_message_add_text(&out->message, text);
    out->stop_reason = LOOM_STOP_END_TURN;
    out->usage.input_tokens = 10;
    out->usage.output_tokens = 5;
    return 0;
}

typedef struct fixture {
    char dir[64];
    agents_session *s;
    transcript *t;
    tool_registry *reg;
    provider_config cfg;
    loop_params p;
    loop_io io;
    tool_ctx tctx;
    loom_cancel cancel;
    fake model;
    spawn_node *root;
    int events;              /* events the run emitted */
} fixture;

static void on_emit(void *ctx, loom_event_type type, loom_visibility vis, const char *corr,
                    json_t *payload)
{
    (void)type, (void)vis, (void)corr;
    ((fixture *)ctx)->events++;
    json_decref(payload);
}

static fixture *make(int max_depth, int max_running)
{
    fixture *f = calloc(1, sizeof *f);
    strcpy(f->dir, "/tmp/loom-agents-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    loom_error err;
    f->t = transcript_create(f->dir, f->dir, "anthropic", "fake-model", &err);
    assert_non_null(f->t);
    f->reg = tool_registry_new();
    assert_int_equal(tool_registry_add_builtins(f->reg, &err), 0);
    assert_int_equal(agents_add_tools(f->reg, NULL, &err), 0);
    f->cfg = (provider_config){.kind = PROVIDER_ANTHROPIC, .model = "fake-model",
                               .context_window = 100000, .max_output_tokens = 4096};
    f->p = (loop_params){.provider = &f->cfg, .tools = f->reg, .system_static = "PARENT-SYS",
                         .system_dynamic = "", .max_turns = 10, .repeat_threshold = 100};
    atomic_init(&f->cancel, 0);
    f->tctx = (tool_ctx){.cwd = f->dir, .session_id = transcript_session_id(f->t),
                         .cancel = &f->cancel, .call_id = "call_parent_1"};
    f->io = (loop_io){.t = f->t, .tools = &f->tctx, .cancel = &f->cancel, .emit = on_emit,
                      .emit_ctx = f, .model = {fake_complete, &f->model}};
    agents_config c;
    agents_config_defaults(&c);
    c.enabled = true;
    c.max_depth = max_depth;
    c.max_running = max_running;
    char mf[128];
    snprintf(mf, sizeof mf, "%s/s.mf", f->dir);
    agents_session_opts o = {.config = &c, .session_id = "s1", .mf_dir = mf, .cwd = f->dir};
    f->s = agents_session_new(&o);
    agents_run_env env = {.params = &f->p, .io = &f->io, .tctx = &f->tctx, .run_id = "run-1"};
    f->root = agents_run_attach(f->s, &env);
    f->tctx.spawn = f->root;
    assert_non_null(f->io.tree.charge);
    return f;
}

/* The session's end; detach first when the test left the run attached. */
static void destroy(fixture *f, bool detach)
{
    if (detach) {
        loop_result res = {0};
        agents_run_detach(f->s, f->root, &res, NULL);
    }
    agents_session_free(f->s);
    transcript_free(f->t);
    tool_registry_free(f->reg);
    free(f->model.last_system);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
}

#endif
