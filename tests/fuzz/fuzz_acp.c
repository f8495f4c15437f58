/* fuzz_acp.c — libFuzzer target for loom acp's reader and dispatcher
 * (src/surfaces/acp/): the input is split into lines as main.c's getline
 * would hand them over, and each goes to acp_server_handle_line (sessions
 * off, so nothing touches LOOM_HOME or a model). Every line the server
 * writes must be one JSON-RPC 2.0 object, a response with exactly one of
 * result and error or a notification; any other answer aborts. Each line
 * that is a JSON object is also given to the pure mappers — as a run
 * event, a conversation, a prompt and an extensions document — which may
 * not crash or leak — and, with its "result", to the checks of the
 * client's answers to fs and terminal requests. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "surfaces/acp/acp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_line(void *ctx, const char *line, size_t n)
{
    (void)ctx;
    json_t *v = json_loadb(line, n, 0, NULL);
    if (!json_is_object(v) || memchr(line, '\n', n))
        abort();
    const char *rpc = json_string_value(json_object_get(v, "jsonrpc"));
    if (!rpc || strcmp(rpc, "2.0") != 0)
        abort();
    bool has_result = json_object_get(v, "result") != NULL;
    bool has_error = json_object_get(v, "error") != NULL;
    bool has_method = json_is_string(json_object_get(v, "method"));
    if (has_method ? (has_result || has_error) : (has_result == has_error))
        abort();
    if (has_error) {
        json_t *e = json_object_get(v, "error");
        if (!json_is_integer(json_object_get(e, "code")) ||
            !json_is_string(json_object_get(e, "message")))
            abort();
    }
    json_decref(v);
}

/* The line (and its "result") as the client's answer to each fs and
 * terminal request (acp_client_reply.c): accepted or refused with a
 * message, and what is accepted holds together. */
static void client_replies(const json_t *v)
{
    char why[300];
    const char *text, *id;
    size_t len;
    if (acp_reply_read_text(v, &text, &len, why, sizeof why) == 0 && !text)
        abort();
    if (acp_reply_terminal_id(v, &id, why, sizeof why) == 0 && (!id || !*id))
        abort();
    acp_exit ex;
    if (acp_reply_exit_status("terminal/wait_for_exit", v, &ex, why, sizeof why) == 0 &&
        (!ex.known || ex.exit_code < -1 || strlen(ex.signal) >= sizeof ex.signal))
        abort();
    acp_term_output out;
    if (acp_reply_terminal_output(v, &out, why, sizeof why) == 0 && !out.output)
        abort();
    acp_reply_empty("terminal/release", v, why, sizeof why);
    acp_reply_error_text("fs/read_text_file", v, why, sizeof why);
    if (!memchr(why, '\0', sizeof why))
        abort();
}

static void map_all(const char *line, size_t n)
{
    json_t *v = json_loadb(line, n, 0, NULL);
    if (!json_is_object(v)) {
        json_decref(v);
        return;
    }
    acp_map m;
    acp_map_init(&m, "/nonexistent", 1000);
    json_t *out = json_array();
    acp_map_event(&m, v, out);
    acp_map_event(&m, v, out); /* the same call twice */
    json_decref(acp_map_permission_tool_call(&m, v));
    acp_map_clear(&m);
    json_decref(out);
    json_decref(acp_replay_updates(json_object_get(v, "conversation")));
    char why[200];
    free(acp_prompt_goal(json_object_get(v, "prompt"), NULL, why, sizeof why));
    json_t *cmds = acp_commands_from_extensions(v);
    acp_commands_add_mcp_prompts(cmds, json_object_get(v, "prompts"));
    json_decref(cmds);
    json_decref(acp_questions_form(v));
    json_decref(acp_questions_form(json_object_get(v, "questions")));
    client_replies(v);
    client_replies(json_object_get(v, "result"));
    json_decref(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    acp_server_options opt = {.write = check_line, .sessions = false};
    acp_server *s = acp_server_new(&opt);
    size_t start = 0;
    while (start < size) {
        const uint8_t *nl = memchr(data + start, '\n', size - start);
        size_t end = nl ? (size_t)(nl - data) + 1 : size;
        acp_server_handle_line(s, (const char *)data + start, end - start);
        map_all((const char *)data + start, end - start);
        start = end;
    }
    acp_server_free(s);
    return 0;
}
