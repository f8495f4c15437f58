/* test_cli_headless.c — the parts of `loom -p` that Claude Code's scripts
 * lean on (docs/cli.md): a stream-json input line as a prompt
 * (surfaces/cli/input_stream.c), and the result object's pieces
 * (surfaces/cli/output_result.c): snake_case usage, the name of a denied
 * call, permission_denials, total_cost_usd null when prices are unknown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "surfaces/cli/input_stream.h"
#include "surfaces/cli/output.h"

static int line(const char *text, char **prompt, char *why)
{
    return input_stream_line(text, strlen(text), prompt, why, 200);
}

static void test_input_line_string_and_blocks(void **state)
{
    (void)state;
    char *prompt, why[200];
    if (line("{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi there\"}}\n",
             &prompt, why) != 1 || strcmp(prompt, "hi there") != 0 || why[0])
        fail_msg("a user line with string content should be its prompt, got \"%s\" (%s)",
                 prompt ? prompt : "(none)", why);
    free(prompt);
    if (line("{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\","
             "\"text\":\"a\"},{\"type\":\"image\",\"source\":{}},{\"type\":\"text\",\"text\":\"b\"}]}}",
             &prompt, why) != 1 || strcmp(prompt, "a\n\nb") != 0)
        fail_msg("text blocks should join with a blank line, got \"%s\"", prompt ? prompt : "");
    if (!strstr(why, "1 block that is not text"))
        fail_msg("a dropped image block should be named in the warning, got \"%s\"", why);
    free(prompt);
}

static void test_input_line_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *reason;
    } cases[] = {
        {"not json", "not JSON ("},
        {"[1,2]", "not a JSON object"},
        {"{\"type\":\"control_request\"}", "another type"},
        {"{\"type\":\"user\",\"message\":\"x\"}", "needs \"message\""},
        {"{\"type\":\"user\",\"message\":{\"role\":\"assistant\",\"content\":\"x\"}}",
         "needs \"message\""},
        {"{\"type\":\"user\",\"message\":{\"content\":7}}", "must be a string or an array"},
        {"{\"type\":\"user\",\"message\":{\"content\":\"  \"}}", "text is empty"},
        {"{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\"}]}}",
         "no text block"},
        {"{\"type\":\"user\",\"message\":{\"content\":\"a\\u0000b\"}}", "not JSON ("},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *prompt = (char *)"unset", why[200];
        int rc = line(cases[i].text, &prompt, why);
        if (rc != -1 || prompt || !strstr(why, cases[i].reason))
            fail_msg("the line %s should be refused with \"%s\", got %d and \"%s\"",
                     cases[i].text, cases[i].reason, rc, why);
    }
    char *prompt, why[200];
    if (line(" \r\n", &prompt, why) != 0 || prompt)
        fail_msg("a blank line should be nothing to do");
    if (input_stream_line("\0\0", 2, &prompt, why, sizeof why) != -1)
        fail_msg("a line of NUL bytes is not blank and should be refused");
}

static void test_usage_and_label(void **state)
{
    (void)state;
    json_t *loom = json_pack("{s:i,s:i,s:i,s:i,s:i}", "inputTokens", 10, "outputTokens", 2,
                             "cacheReadTokens", 7, "cacheCreationTokens", 3, "reasoningTokens", 1);
    json_t *cc = output_usage_snake(loom);
    char *s = json_dumps(cc, JSON_COMPACT);
    assert_string_equal(s, "{\"input_tokens\":10,\"output_tokens\":2,"
                           "\"cache_creation_input_tokens\":3,\"cache_read_input_tokens\":7,"
                           "\"reasoning_tokens\":1}");
    free(s);
    json_decref(cc);
    json_decref(loom);

    json_t *in = json_pack("{s:s}", "command", "rm -rf x");
    char *label = output_call_label("Bash", in);
    if (strcmp(label, "Bash(rm -rf x)") != 0)
        fail_msg("a Bash call should be named by its command, got \"%s\"", label);
    free(label);
    json_decref(in);
    label = output_call_label("TodoWrite", NULL);
    if (strcmp(label, "TodoWrite") != 0)
        fail_msg("a call without a matched field should be its tool's name, got \"%s\"", label);
    free(label);
}

static void test_denials_and_result(void **state)
{
    (void)state;
    cli_output o = {.format = OUTPUT_JSON};
    output_begin(&o);
    json_t *started = json_pack("{s:s,s:s,s:{s:s}}", "call_id", "c1", "tool", "Bash", "input",
                                "command", "rm -rf x");
    output_note_call(&o, started);
    json_t *failed = json_pack("{s:s,s:s,s:s,s:s}", "call_id", "c1", "tool", "Bash", "failed_step",
                               "decide", "output",
                               "Permission to use Bash was denied: denied by settings rule "
                               "Bash(rm:*) (project settings). Do not retry");
    const char *why = output_note_denial(&o, failed);
    if (!why || strncmp(why, "denied by settings rule Bash(rm:*)", 34) != 0)
        fail_msg("a denied call's reason should follow \"was denied: \", got \"%s\"",
                 why ? why : "(none)");
    json_t *ran = json_pack("{s:s,s:s,s:s}", "call_id", "c2", "tool", "Bash", "output", "boom");
    if (output_note_denial(&o, ran))
        fail_msg("a tool that failed by itself is no denial");

    json_t *res = json_pack("{s:s,s:i,s:s,s:{s:i},s:s}", "result", "ok", "num_turns", 2,
                            "session_id", "s1", "usage", "inputTokens", 5, "state", "failed");
    json_t *out = output_result_object(&o, NULL, res);
    if (!json_is_null(json_object_get(out, "total_cost_usd")))
        fail_msg("with no cost_usd in the run's result, total_cost_usd should be null");
    if (json_get_int(json_get_obj(out, "usage"), "input_tokens", -1) != 5)
        fail_msg("the result's usage should be in snake_case");
    if (strcmp(json_get_str(out, "state", ""), "failed") != 0)
        fail_msg("Loom's own fields should follow Claude Code's");
    json_t *d = json_get_arr(out, "permission_denials");
    if (json_array_size(d) != 1 ||
        strcmp(json_get_str(json_array_get(d, 0), "tool_use_id", ""), "c1") != 0 ||
        strcmp(json_get_str(json_get_obj(json_array_get(d, 0), "tool_input"), "command", ""),
               "rm -rf x") != 0)
        fail_msg("permission_denials should hold the denied call with its input");
    json_decref(out);
    json_decref(res);
    json_decref(started);
    json_decref(failed);
    json_decref(ran);
    output_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_input_line_string_and_blocks),
        cmocka_unit_test(test_input_line_refusals),
        cmocka_unit_test(test_usage_and_label),
        cmocka_unit_test(test_denials_and_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
