/* test_cli_render.c — the REPL's markdown → terminal renderer
 * (src/surfaces/cli/render.c): plain output carries no escape codes, the
 * styles land where the markdown puts them, and streaming — text cut
 * anywhere, a code block arriving in pieces — renders each piece once and
 * exactly as the whole text would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "surfaces/cli/render.h"

static char *render(const char *md, bool color)
{
    loom_str out = LOOM_STR_INIT;
    render_markdown(md, strlen(md), color, 80, &out);
    str_puts(&out, "");
    return str_steal(&out);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static const char *doc =
    "# Title\n"
    "\n"
    "Some **bold**, *italic* and `code` with a [link](https://example.com).\n"
    "\n"
    "- one\n"
    "- two\n"
    "  - nested\n"
    "1. first\n"
    "2. second\n"
    "\n"
    "> quoted\n"
    "\n"
    "```c\n"
    "int main(void)\n"
    "{\n"
    "    return 0;\n"
    "}\n"
    "```\n"
    "\n"
    "| a | bb |\n"
    "|---|----|\n"
    "| ccc | d |\n"
    "\n"
    "---\n"
    "Fin &amp; done\n";

static void test_plain_has_no_escapes(void **state)
{
    char *out = render(doc, false);
    assert_null(strchr(out, '\x1b'));
    assert_non_null(strstr(out, "Title\n"));
    assert_null(strstr(out, "# Title"));
    assert_non_null(strstr(out, "Some bold, italic and code with a link (https://example.com).\n"));
    assert_non_null(strstr(out, "\xe2\x80\xa2 one\n\xe2\x80\xa2 two\n"));
    assert_non_null(strstr(out, "  \xe2\x97\xa6 nested\n"));
    assert_non_null(strstr(out, "1. first\n2. second\n"));
    assert_non_null(strstr(out, "\xe2\x94\x82 quoted\n"));
    assert_non_null(strstr(out, "    int main(void)\n    {\n        return 0;\n    }\n"));
    assert_null(strstr(out, "```"));
    assert_non_null(strstr(out, "Fin & done\n"));
    free(out);
}

static void test_layout_follows_source_lines(void **state)
{
    char *out = render("para one\n\n\n\npara two\n", false);
    /* Blank lines collapse to one; nothing trails. */
    assert_string_equal(out, "para one\n\npara two\n");
    free(out);
}

static void test_color_styles(void **state)
{
    char *out = render("# Head\n## Sub\n**strong** _em_ `tick`\n", true);
    assert_non_null(strstr(out, "\x1b[1;4mHead"));
    assert_non_null(strstr(out, "\x1b[1mSub"));
    assert_non_null(strstr(out, "\x1b[1mstrong"));
    assert_non_null(strstr(out, "\x1b[3mem"));
    assert_non_null(strstr(out, "\x1b[36mtick"));
    assert_null(strstr(out, "**"));
    assert_null(strstr(out, "`"));
    /* Styled lines end with the reset, so no style leaks past them. */
    assert_non_null(strstr(out, "Head\x1b[0m\n"));
    assert_non_null(strstr(out, "tick\x1b[0m\n"));
    free(out);
}

static void test_nested_styles_survive(void **state)
{
    /* Leaving the inner emphasis keeps the outer bold on. */
    char *out = render("**bold *both* still**\n", true);
    assert_non_null(strstr(out, "\x1b[1;3mboth"));
    assert_non_null(strstr(out, "\x1b[0m\x1b[1m still"));
    free(out);
}

static void test_code_block_dim_and_indented(void **state)
{
    char *out = render("```\nx = 1\n```\n", true);
    assert_non_null(strstr(out, "    \x1b[2mx = 1"));
    free(out);
}

static void test_links(void **state)
{
    char *out = render("see [docs](https://d.io/x) and https://auto.io/y\n", false);
    assert_string_equal(out, "see docs (https://d.io/x) and https://auto.io/y\n");
    free(out);
}

static void test_table_is_aligned(void **state)
{
    char *out = render("| a | bb |\n|---|---:|\n| ccc | d |\n", false);
    assert_string_equal(out,
                        "a   \xe2\x94\x82 bb\n"
                        "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\xbc"
                        "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\n"
                        "ccc \xe2\x94\x82  d\n");
    free(out);
}

/* The same text, fed one byte at a time, renders exactly as the whole. */
static void test_bytewise_stream_matches_whole(void **state)
{
    for (int color = 0; color < 2; color++) {
        char *whole = render(doc, color);
        render_stream *rs = render_stream_new(color, 80);
        loom_str out = LOOM_STR_INIT;
        for (const char *p = doc; *p; p++)
            render_stream_feed(rs, p, 1, &out);
        render_stream_finish(rs, &out);
        assert_string_equal(str_cstr(&out), whole);
        str_free(&out);
        render_stream_free(rs);
        free(whole);
    }
}

static void test_code_block_split_renders_once(void **state)
{
    render_stream *rs = render_stream_new(false, 80);
    loom_str out = LOOM_STR_INIT;
    render_stream_feed(rs, "Here:\n``", 8, &out);
    assert_string_equal(str_cstr(&out), "Here:\n");
    render_stream_feed(rs, "`py\nprint(", 10, &out);
    render_stream_feed(rs, "1)\n\nx = 2\n`", 11, &out);
    /* Nothing of the block shows before it is closed. */
    assert_string_equal(str_cstr(&out), "Here:\n");
    assert_true(render_stream_pending(rs));
    render_stream_feed(rs, "``\nafter", 8, &out);
    /* The block's language shows above it. */
    assert_string_equal(str_cstr(&out), "Here:\n  \xe2\x94\x8c py\n    print(1)\n\n    x = 2\n");
    render_stream_finish(rs, &out);
    assert_string_equal(str_cstr(&out),
                        "Here:\n  \xe2\x94\x8c py\n    print(1)\n\n    x = 2\nafter\n");
    assert_int_equal(count(str_cstr(&out), "print(1)"), 1);
    assert_false(render_stream_pending(rs));
    str_free(&out);
    render_stream_free(rs);
}

static void test_finish_renders_unclosed_block_and_partial_line(void **state)
{
    render_stream *rs = render_stream_new(false, 80);
    loom_str out = LOOM_STR_INIT;
    render_stream_feed(rs, "**almost", 8, &out);
    assert_int_equal(out.len, 0);
    render_stream_finish(rs, &out);
    assert_string_equal(str_cstr(&out), "**almost\n");
    str_clear(&out);
    render_stream_feed(rs, "```\nnever closed\n", 17, &out);
    assert_int_equal(out.len, 0);
    render_stream_finish(rs, &out);
    assert_string_equal(str_cstr(&out), "    never closed\n");
    str_free(&out);
    render_stream_free(rs);
}

static void test_discard_drops_pending(void **state)
{
    render_stream *rs = render_stream_new(false, 80);
    loom_str out = LOOM_STR_INIT;
    render_stream_feed(rs, "half a li", 9, &out);
    render_stream_discard(rs);
    render_stream_feed(rs, "fresh\n", 6, &out);
    render_stream_finish(rs, &out);
    assert_string_equal(str_cstr(&out), "fresh\n");
    str_free(&out);
    render_stream_free(rs);
}

static void test_display_width(void **state)
{
    const char *s = "\x1b[1mab\x1b[0m\xe2\x80\xa2";
    assert_int_equal(render_display_width(s, strlen(s)), 3);
}

/* The model's text cannot drive the terminal through the renderer: raw
 * controls, numeric entities that decode to them, and link targets all come
 * out visible; in color mode the only escapes are SGR codes (ESC [ … m). */
static void test_model_controls_are_shown_not_sent(void **state)
{
    (void)state;
    static const char *const inputs[] = {
        "title \x1b]0;pwned\x07 here\n",
        "clip \x1b]52;c;ZXZpbA==\x07\n",
        "clear \x1b[2J\x1b[H\n",
        "csi8 \xc2\x9b" "2J and raw \x9b" "2J\n",
        "bidi \xe2\x80\xae" "txt.exe\n",
        "entity &#27;]0;t&#7; and &#x9b;2J and &#x202e;x\n",
        "over\rwrite\n",
        "[link](http://x/\x1b]0;t\x07) and `code \x1b[31m`\n",
        "```\nfenced \x1b[2J\n```\n",
        "| a \x1b[2J | b |\n|---|---|\n| \x1b]0;t\x07 | d |\n",
    };
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        for (int color = 0; color < 2; color++) {
            char *out = render(inputs[i], color);
            for (const unsigned char *p = (const unsigned char *)out; *p; p++) {
                if (*p == 0x1b) {
                    /* only SGR: ESC [ digits ; m */
                    assert_true(color);
                    assert_int_equal(p[1], '[');
                    const unsigned char *q = p + 2;
                    while ((*q >= '0' && *q <= '9') || *q == ';')
                        q++;
                    if (*q != 'm')
                        fail_msg("input %zu: a non-SGR escape in \"%s\"", i, out);
                    continue;
                }
                assert_true(*p >= 0x20 || *p == '\n');
                if (p[0] == 0xc2)
                    assert_false(p[1] >= 0x80 && p[1] <= 0x9f);
                if (p[0] == 0xe2 && p[1] == 0x80)
                    assert_false(p[2] >= 0xaa && p[2] <= 0xae);
            }
            free(out);
        }
    }
    char *out = render("title \x1b]0;pwned\x07 &#27;x\n", false);
    assert_non_null(strstr(out, "^[]0;pwned^G"));
    assert_non_null(strstr(out, "^[x"));
    free(out);
    out = render("a \xe2\x80\xae b\n", false);
    assert_non_null(strstr(out, "<U+202E>"));
    free(out);
    /* A lone CR is shown, not read as a line break; CR LF is a newline. */
    out = render("safe\rEVIL\r\nnext\n", false);
    assert_string_equal(out, "safe^MEVIL\nnext\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_has_no_escapes),
        cmocka_unit_test(test_layout_follows_source_lines),
        cmocka_unit_test(test_color_styles),
        cmocka_unit_test(test_nested_styles_survive),
        cmocka_unit_test(test_code_block_dim_and_indented),
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_table_is_aligned),
        cmocka_unit_test(test_bytewise_stream_matches_whole),
        cmocka_unit_test(test_code_block_split_renders_once),
        cmocka_unit_test(test_finish_renders_unclosed_block_and_partial_line),
        cmocka_unit_test(test_discard_drops_pending),
        cmocka_unit_test(test_display_width),
        cmocka_unit_test(test_model_controls_are_shown_not_sent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
