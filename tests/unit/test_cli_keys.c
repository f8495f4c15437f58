/* test_cli_keys.c — the REPL's key logic, footer text and statusLine
 * command (surfaces/cli/keys.c, footer.c, statusline.c): a lone Esc told
 * from an escape sequence, Shift-Tab's mode cycle, the empty-prompt Ctrl-C
 * pair, the footer's parts and colours cut to the width, the statusLine's
 * JSON input, its setting, its output cleaned, and a failing command. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "surfaces/cli/footer.h"
#include "surfaces/cli/keys.h"
#include "surfaces/cli/statusline.h"

static key_kind next(const char *s, bool final, size_t *len)
{
    return keys_next((const unsigned char *)s, strlen(s), final, len);
}

static void test_keys_decode(void **state)
{
    (void)state;
    size_t len;
    assert_int_equal(next("a", false, &len), KEY_TEXT);
    assert_int_equal(len, 1);
    if (next("\x1b", false, &len) != KEY_INCOMPLETE)
        fail_msg("a lone ESC should wait for a following byte before it counts");
    if (next("\x1b", true, &len) != KEY_ESC || len != 1)
        fail_msg("a lone ESC with nothing after it in time should be Esc");
    if (next("\x1b[A", false, &len) != KEY_SEQUENCE || len != 3)
        fail_msg("an arrow key should be one sequence of 3 bytes, not Esc");
    if (next("\x1b[", false, &len) != KEY_INCOMPLETE)
        fail_msg("a CSI cut short should wait for its end");
    if (next("\x1b[", true, &len) != KEY_SEQUENCE || len != 2)
        fail_msg("a CSI cut short for good should be a sequence, never Esc");
    if (next("\x1b[Zx", false, &len) != KEY_SHIFT_TAB || len != 3)
        fail_msg("ESC [ Z should be Shift-Tab");
    if (next("\x1b[1;5Cq", false, &len) != KEY_SEQUENCE || len != 6)
        fail_msg("Ctrl-Right (ESC [ 1 ; 5 C) should be one sequence");
    if (next("\x1bOP", false, &len) != KEY_SEQUENCE || len != 3)
        fail_msg("F1 (ESC O P) should be one sequence");
    if (next("\x1bO", false, &len) != KEY_INCOMPLETE)
        fail_msg("ESC O should wait for its third byte");
    if (next("\x1bx", false, &len) != KEY_SEQUENCE || len != 2)
        fail_msg("Alt-x should be a sequence, not Esc");
    if (next("\x1b\x1b", false, &len) != KEY_ESC || len != 1)
        fail_msg("Esc pressed twice: the first should be Esc on its own");
    if (next("\x1b[1\x01", false, &len) != KEY_SEQUENCE || len != 3)
        fail_msg("a malformed CSI should end before the stray byte");
}

static void test_mode_cycle(void **state)
{
    (void)state;
    assert_string_equal(keys_next_mode("default"), "acceptEdits");
    assert_string_equal(keys_next_mode("acceptEdits"), "plan");
    assert_string_equal(keys_next_mode("plan"), "default");
    if (strcmp(keys_next_mode("bypassPermissions"), "default") != 0)
        fail_msg("a mode outside the cycle should go back to default, never further");
}

static void test_ctrl_c_pair(void **state)
{
    (void)state;
    long long armed = 0;
    if (keys_ctrl_c(&armed, 1000, true))
        fail_msg("the first Ctrl-C on an empty prompt should not quit");
    if (!keys_ctrl_c(&armed, 1900, true))
        fail_msg("a second Ctrl-C within a second should quit");
    armed = 0;
    keys_ctrl_c(&armed, 1000, true);
    if (keys_ctrl_c(&armed, 2500, true))
        fail_msg("a second Ctrl-C more than a second later should not quit");
    if (keys_ctrl_c(&armed, 2600, false) || armed != 0)
        fail_msg("a Ctrl-C on a non-empty line should clear it and disarm the pair");
    if (keys_ctrl_c(&armed, 2700, true))
        fail_msg("after a cleared line, the next empty Ctrl-C is a first press");
}

static void test_footer_text(void **state)
{
    (void)state;
    footer_info in = {.mode = "plan", .model = "claude-sonnet-4-5", .ctx_tokens = 24000,
                      .ctx_window = 200000, .agents_running = 2};
    char *t = footer_text(&in, false, 120);
    assert_string_equal(t, "  \xe2\x8f\xb8 plan \xc2\xb7 claude-sonnet-4-5 \xc2\xb7 ctx 12% of 200k"
                           " \xc2\xb7 2 agents running");
    free(t);
    in.mode = "bypassPermissions";
    t = footer_text(&in, true, 120);
    if (!strstr(t, "\x1b[1;31m\xe2\x9a\xa0 bypassPermissions\x1b[0m"))
        fail_msg("bypassPermissions should be marked and bold red: %s", t);
    free(t);
    in.mode = "acceptEdits";
    t = footer_text(&in, false, 40);
    if (strstr(t, "agents") || !strstr(t, "acceptEdits"))
        fail_msg("a narrow footer should drop its last parts and keep the mode: %s", t);
    if (strchr(t, '\x1b'))
        fail_msg("without colour the footer should hold no escape: %s", t);
    free(t);
    in.mode = "default";
    in.model = "evil\x1b]0;title\a";
    t = footer_text(&in, false, 120);
    if (strchr(t, '\x1b') || strchr(t, '\a'))
        fail_msg("a model name's escapes should be shown, never sent: %s", t);
    free(t);
    in.custom = "my line";
    t = footer_text(&in, false, 120);
    assert_string_equal(t, "my line");
    free(t);
    in.mode = "plan";
    t = footer_text(&in, false, 120);
    assert_string_equal(t, "  \xe2\x8f\xb8 plan \xc2\xb7 my line");
    free(t);
    char buf[64];
    footer_format_context(1500, 128000, buf, sizeof buf);
    assert_string_equal(buf, "1% of 128k");
}

static void test_statusline_input(void **state)
{
    (void)state;
    statusline_info in = {.session_id = "s1", .transcript_path = "/t/s1.jsonl", .cwd = "/w",
                          .model = "m1", .version = "0.1.0", .output_style = "Explanatory",
                          .cost_usd = 0.25, .context_tokens = 1000, .context_window = 200000};
    char *text = statusline_input_json(&in);
    loom_error err;
    json_t *doc = json_parse(text, strlen(text), "input", &err);
    assert_non_null(doc);
    assert_string_equal(json_get_str(doc, "session_id", ""), "s1");
    assert_string_equal(json_get_str(doc, "transcript_path", ""), "/t/s1.jsonl");
    assert_string_equal(json_get_str(doc, "cwd", ""), "/w");
    assert_string_equal(json_get_str(json_get_obj(doc, "model"), "id", ""), "m1");
    assert_string_equal(json_get_str(json_get_obj(doc, "model"), "display_name", ""), "m1");
    assert_string_equal(json_get_str(json_get_obj(doc, "workspace"), "current_dir", ""), "/w");
    assert_string_equal(json_get_str(json_get_obj(doc, "workspace"), "project_dir", ""), "/w");
    assert_string_equal(json_get_str(json_get_obj(doc, "output_style"), "name", ""), "Explanatory");
    assert_string_equal(json_get_str(doc, "version", ""), "0.1.0");
    if (json_get_num(json_get_obj(doc, "cost"), "total_cost_usd", -1) != 0.25)
        fail_msg("cost.total_cost_usd should carry the session's cost: %s", text);
    json_decref(doc);
    free(text);
    in.cost_usd = -1;
    text = statusline_input_json(&in);
    if (!strstr(text, "\"total_cost_usd\":null"))
        fail_msg("an unknown cost should be null, never a sentinel: %s", text);
    free(text);
}

static void test_statusline_setting(void **state)
{
    (void)state;
    int pad;
    char *c = statusline_command("{\"type\": \"command\", \"command\": \"echo hi\", \"padding\": 2}", &pad);
    assert_string_equal(c, "echo hi");
    assert_int_equal(pad, 2);
    free(c);
    if (statusline_command("{\"type\": \"other\", \"command\": \"x\"}", &pad))
        fail_msg("a statusLine of another type should run nothing");
    if (statusline_command("{\"command\": \"\"}", &pad) || statusline_command("[1]", &pad) ||
        statusline_command("not json", &pad) || statusline_command(NULL, &pad))
        fail_msg("an empty or malformed statusLine should run nothing");
}

static void test_statusline_clean(void **state)
{
    (void)state;
    char *s = statusline_clean("\x1b[34mblue\x1b[0m \x1b]0;t\a\x1b[2Jok\nsecond", 80, true, 0);
    assert_string_equal(s, "\x1b[34mblue\x1b[0m ok\x1b[0m");
    free(s);
    s = statusline_clean("\x1b[34mblue\x1b[0m\r\n", 80, false, 1);
    assert_string_equal(s, " blue");
    free(s);
    s = statusline_clean("abcdef\x07gh", 4, false, 0);
    assert_string_equal(s, "abcd");
    free(s);
}

static void test_statusline_run(void **state)
{
    (void)state;
    char *s = statusline_run("cat > /dev/null; printf 'first\\nsecond\\n'", "/", "{}", 80, false, 0);
    assert_non_null(s);
    assert_string_equal(s, "first");
    free(s);
    s = statusline_run("read -r line; printf '%s\\n' \"$line\"", "/", "{\"a\":1}\n", 80, false, 0);
    assert_string_equal(s, "{\"a\":1}");
    free(s);
    if (statusline_run("echo out; exit 3", "/", "{}", 80, false, 0))
        fail_msg("a failing statusLine command should give the built-in footer");
    if (statusline_run("true", "/", "{}", 80, false, 0))
        fail_msg("a statusLine command printing nothing should give the built-in footer");
    if (statusline_run("sleep 10; echo late", "/", "{}", 80, false, 0))
        fail_msg("a statusLine command past its time limit should give the built-in footer");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_decode),      cmocka_unit_test(test_mode_cycle),
        cmocka_unit_test(test_ctrl_c_pair),      cmocka_unit_test(test_footer_text),
        cmocka_unit_test(test_statusline_input), cmocka_unit_test(test_statusline_setting),
        cmocka_unit_test(test_statusline_clean), cmocka_unit_test(test_statusline_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
