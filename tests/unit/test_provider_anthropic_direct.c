/* test_provider_anthropic_direct.c — the Anthropic encoder writes the body text
 * straight from the msg_request; it must give the very bytes the old
 * tree-building encoder gave (kept as reference_encode) for every request:
 * each block kind, escapes, unicode and invalid UTF-8, images, thinking with
 * and without signature, tool results, empty messages, cache breakpoints,
 * system parts, tools with nested schemas, temperature, thinking budget,
 * streaming. Also the json.c pieces it is built from. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "anthropic_encode_reference.h"

static const char *const texts[] = {
    "",
    "hello",
    "quote \" backslash \\ slash / done",
    "line\nbreak\r\ttab\b\f and \x01\x02\x1f control",
    "exactly8",
    "\"\"\"\"\"\"\"\"\\\\\\\\\\\\\\\\",
    "unicode: h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87",
    "invalid \xff byte",
    "overlong \xc0\xaf",
    "surrogate \xed\xa0\x80",
    "truncated \xe2\x82",
    "past max \xf4\x90\x80\x80",
    "a long plain run of ascii that crosses several eight byte words "
    "before it ends with an escape\n",
    "\x7f del and ~ tilde } brace",
    "</script><!-- html -->",
};
#define N_TEXTS (sizeof texts / sizeof texts[0])

static provider_config config(void)
{
    provider_config cfg;
    provider_config_init(&cfg);
    cfg.base_url = strdup("http://127.0.0.1:9/");
    cfg.api_key = strdup("k");
    free(cfg.model);
    cfg.model = strdup("cfg-model");
    return cfg;
}

static json_t *nested_schema(void)
{
    return json_pack("{s:s,s:{s:{s:s,s:s},s:{s:s,s:{s:s},s:i,s:f,s:b,s:n}},s:[s],s:b}", "type",
                     "object", "properties", "command", "type", "string", "description",
                     "The \"command\"\n\xe2\x82\xac", "items", "type", "array", "items", "type",
                     "integer", "maxItems", 12, "weight", 0.1, "flag", 1, "none", "required",
                     "command", "additionalProperties", 0);
}

static void check(const msg_request *req, const provider_config *cfg)
{
    assert_int_equal(encoders_agree(req, cfg), 0);
}

static void test_json_pieces(void **state)
{
    (void)state;
    /* json_put_string escapes as json_dump_compact does, at every offset
     * and length around the 8-byte words. */
    char buf[64];
    for (size_t t = 0; t < N_TEXTS; t++) {
        for (size_t off = 0; off < 9; off++) {
            size_t n = strlen(texts[t]);
            memset(buf, 'x', sizeof buf);
            size_t len = off + n < sizeof buf ? off + n : sizeof buf - 1;
            memcpy(buf + off, texts[t], len - off);
            buf[len] = '\0';
            json_t *s = json_stringn_nocheck(buf, len);
            char *want = json_dump_compact(s);
            loom_str got = LOOM_STR_INIT;
            json_put_string(&got, buf, len);
            assert_string_equal(str_cstr(&got), want);
            str_clear(&got);
            assert_int_equal(json_dump_compact_into(&got, s, 0), 0);
            assert_string_equal(str_cstr(&got), want);
            free(want);
            str_free(&got);
            json_decref(s);
        }
    }
    /* Every single byte value, alone and inside plain runs. */
    for (int c = 1; c < 256; c++) {
        char one[20];
        memset(one, 'a', sizeof one);
        one[c % 17] = (char)c;
        one[19] = '\0';
        json_t *s = json_stringn_nocheck(one, 19);
        char *want = json_dump_compact(s);
        loom_str got = LOOM_STR_INIT;
        json_put_string(&got, one, 19);
        assert_string_equal(str_cstr(&got), want);
        free(want);
        str_free(&got);
        json_decref(s);
    }
    const double reals[] = {0.0, -0.0, 1.0, 0.1, 0.7, 1e100, 1e-7, 123456789012345678.0,
                            2.5e-300, 1.0 / 3};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        json_t *r = json_real(reals[i]);
        char *want = json_dump_compact(r);
        loom_str got = LOOM_STR_INIT;
        assert_int_equal(json_put_real(&got, reals[i]), 0);
        assert_string_equal(str_cstr(&got), want);
        free(want);
        str_free(&got);
        json_decref(r);
    }
}

static void test_every_block_kind(void **state)
{
    (void)state;
    provider_config cfg = config();
    for (size_t t = 0; t < N_TEXTS; t++) {
        for (int cache = 0; cache < 2; cache++) {
            msg_request req = {0};
            req.temperature = -1;
            const char *s = texts[t];
            msg_message *u = msg_request_add_message(&req, MSG_ROLE_USER);
            msg_message_add_text(u, s)->cache_control = cache;
            msg_message_add_image(u, s, "iVBORw0KGgo=")->cache_control = cache;
            msg_message_add_image(u, "image/jpeg", s)->cache_control = cache;
            msg_message_push(u, MSG_BLOCK_IMAGE)->cache_control = cache; /* all NULL */
            msg_message *a = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
            msg_message_add_thinking(a, s, NULL)->cache_control = cache;
            msg_message_add_thinking(a, s, "SIG")->cache_control = cache;
            msg_message_add_thinking(a, "think", s)->cache_control = cache;
            msg_message_add_redacted_thinking(a, s)->cache_control = cache;
            msg_message_add_text(a, s);
            msg_message_add_tool_use(a, s, "Bash", json_pack("{s:s}", "command", "ls"))
                ->cache_control = cache;
            msg_message_add_tool_use(a, "tu2", s, NULL)->cache_control = cache;
            msg_message_push(a, MSG_BLOCK_TOOL_USE); /* no id, name or input */
            msg_message *r = msg_request_add_message(&req, MSG_ROLE_USER);
            msg_message_add_tool_result(r, s, "ok", false)->cache_control = cache;
            msg_message_add_tool_result(r, "tu2", s, true)->cache_control = cache;
            msg_message_push(r, MSG_BLOCK_TOOL_RESULT)->is_error = true;
            msg_message_push(r, MSG_BLOCK_TEXT)->cache_control = cache;
            msg_message_push(r, MSG_BLOCK_REDACTED_THINKING);
            check(&req, &cfg);
            req.stream = true;
            req.model = strdup(s);
            check(&req, &cfg);
            msg_request_free(&req);
        }
    }
    provider_config_free(&cfg);
}

static void test_empty_and_dropped_messages(void **state)
{
    (void)state;
    provider_config cfg = config();
    msg_request req = {0};
    req.temperature = -1;
    check(&req, &cfg); /* no messages at all */
    msg_request_add_message(&req, MSG_ROLE_USER); /* no blocks */
    check(&req, &cfg);
    msg_message_add_thinking(msg_request_add_message(&req, MSG_ROLE_ASSISTANT), "x", NULL);
    check(&req, &cfg); /* only an unsigned thinking block */
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "bad \xff");
    check(&req, &cfg); /* only invalid UTF-8 */
    msg_message *m = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
    msg_message_add_thinking(m, "x", NULL);
    msg_message_add_text(m, "kept");
    msg_message_add_text(m, "bad \xc0\x80");
    msg_message_add_text(m, "kept too");
    check(&req, &cfg);
    msg_request_add_message(&req, MSG_ROLE_USER);
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "last");
    check(&req, &cfg);
    msg_request_free(&req);
    provider_config_free(&cfg);
}

static void test_envelope(void **state)
{
    (void)state;
    provider_config cfg = config();
    const char *systems[] = {NULL, "", "Be brief.", "sys \"q\"\n\xe2\x82\xac", "bad \xff"};
    const double temps[] = {-1, -0.5, 0, -0.0, 0.7, 1, 0.1, 1e-9, 2.5, INFINITY, -INFINITY, NAN};
    const int budgets[] = {0, -5, 1, 1024, 32000};
    const int maxes[] = {0, -1, 1, 8192};
    for (size_t s1 = 0; s1 < 5; s1++)
        for (size_t s2 = 0; s2 < 5; s2++)
            for (int cache = 0; cache < 2; cache++) {
                msg_request req = {0};
                req.temperature = -1;
                req.system = s1 ? strdup(systems[s1]) : NULL;
                req.system_dynamic = s2 ? strdup(systems[s2]) : NULL;
                req.system_cache = cache;
                msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "hi");
                check(&req, &cfg);
                msg_request_free(&req);
            }
    for (size_t t = 0; t < sizeof temps / sizeof temps[0]; t++)
        for (size_t b = 0; b < 5; b++)
            for (size_t mx = 0; mx < 4; mx++)
                for (int stream = 0; stream < 2; stream++) {
                    msg_request req = {0};
                    req.temperature = temps[t];
                    req.thinking_budget = budgets[b];
                    req.max_tokens = maxes[mx];
                    req.stream = stream;
                    if (stream)
                        req.model = strdup("claude-x");
                    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "hi");
                    check(&req, &cfg);
                    msg_request_free(&req);
                }
    /* No model anywhere, a model with bad UTF-8, no base URL or key. */
    provider_config bare;
    provider_config_init(&bare);
    free(bare.model);
    bare.model = NULL;
    msg_request req = {0};
    req.temperature = -1;
    check(&req, &bare);
    req.model = strdup("m\xff\xfe-\xe2\x82");
    check(&req, &bare);
    msg_request_free(&req);
    provider_config_free(&bare);
    provider_config_free(&cfg);
}

static void test_tools(void **state)
{
    (void)state;
    provider_config cfg = config();
    msg_request req = {0};
    req.temperature = 0.2;
    req.stream = true;
    msg_message_add_text(msg_request_add_message(&req, MSG_ROLE_USER), "hi");
    msg_request_add_tool(&req, "Bash", "Run a command", nested_schema());
    check(&req, &cfg);
    msg_request_add_tool(&req, "Read", NULL, NULL);
    msg_request_add_tool(&req, "Bad\xff", "desc", nested_schema());
    msg_request_add_tool(&req, "Edit", "desc \xed\xa0\x80", nested_schema());
    msg_request_add_tool(&req, "Esc\"aped\n", "\\ \t \x01", json_pack("{s:[i,f,s,n,b]}", "enum",
                                                                    -3, 1e100, "x", 0));
    check(&req, &cfg);
    /* Tools the old encoder dropped: NULL name, description or schema. */
    msg_request_add_tool(&req, "Gone", "d", NULL);
    json_decref(req.tools[req.n_tools - 1].input_schema);
    req.tools[req.n_tools - 1].input_schema = NULL;
    msg_request_add_tool(&req, "Gone2", "d", NULL);
    free(req.tools[req.n_tools - 1].description);
    req.tools[req.n_tools - 1].description = NULL;
    msg_request_add_tool(&req, "x", "d", NULL);
    free(req.tools[req.n_tools - 1].name);
    req.tools[req.n_tools - 1].name = NULL;
    check(&req, &cfg);
    msg_request_free(&req);

    /* Every tool dropped still leaves "tools":[]. */
    msg_request only_bad = {0};
    only_bad.temperature = -1;
    msg_request_add_tool(&only_bad, "Bad\xff", "desc", NULL);
    check(&only_bad, &cfg);
    msg_request_free(&only_bad);
    provider_config_free(&cfg);
}

static json_t *deep(int levels)
{
    json_t *v = json_object();
    for (int i = 0; i < levels; i++)
        v = json_pack("[o]", v);
    return v;
}

static void test_depth_limit(void **state)
{
    (void)state;
    provider_config cfg = config();
    /* Around jansson's 2048-level limit, counted from the body's root. */
    for (int levels = 2038; levels <= 2048; levels++) {
        msg_request req = {0};
        req.temperature = -1;
        msg_message *m = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
        msg_message_add_tool_use(m, "t", "n", deep(levels));
        check(&req, &cfg);
        /* A block dropped for its id is never serialized: no failure. */
        free(m->blocks[0].id);
        m->blocks[0].id = strdup("\xff");
        check(&req, &cfg);
        msg_request_free(&req);

        msg_request treq = {0};
        treq.temperature = -1;
        msg_request_add_tool(&treq, "T", "d", deep(levels));
        check(&treq, &cfg);
        msg_request_free(&treq);
    }
    provider_config_free(&cfg);
}

/* A request shaped like a real session's: a long conversation. */
static void test_long_conversation(void **state)
{
    (void)state;
    provider_config cfg = config();
    msg_request req = {0};
    req.model = strdup("claude-sonnet");
    req.system = strdup("You are Loom.\n\n# Tools\nUse them \"well\".");
    req.system_dynamic = strdup("cwd: /tmp/x\ndate: today");
    req.system_cache = true;
    req.max_tokens = 32000;
    req.temperature = -1;
    req.thinking_budget = 4000;
    req.stream = true;
    for (int i = 0; i < 40; i++) {
        char buf[64];
        msg_message *u = msg_request_add_message(&req, MSG_ROLE_USER);
        if (i == 0) {
            msg_message_add_text(u, "go");
        } else {
            snprintf(buf, sizeof buf, "t%d", i - 1);
            msg_message_add_tool_result(u, buf, "turn output\nline 2", i % 7 == 0);
        }
        if (i % 10 == 9)
            u->blocks[u->n_blocks - 1].cache_control = true;
        msg_message *a = msg_request_add_message(&req, MSG_ROLE_ASSISTANT);
        msg_message_add_thinking(a, "hmm", i % 2 ? "sig==" : NULL);
        snprintf(buf, sizeof buf, "step %d", i);
        msg_message_add_text(a, buf);
        snprintf(buf, sizeof buf, "t%d", i);
        msg_message_add_tool_use(a, buf, "Bash",
                                  json_pack("{s:s,s:i}", "command", "echo turn", "timeout", i));
    }
    for (int i = 0; i < 12; i++) {
        char name[16];
        snprintf(name, sizeof name, "Tool%d", i);
        msg_request_add_tool(&req, name, "Does a thing.\nCarefully.", nested_schema());
    }
    check(&req, &cfg);
    msg_request_free(&req);
    provider_config_free(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_pieces),
        cmocka_unit_test(test_every_block_kind),
        cmocka_unit_test(test_empty_and_dropped_messages),
        cmocka_unit_test(test_envelope),
        cmocka_unit_test(test_tools),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_long_conversation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
