/* test_frontmatter.c — the YAML frontmatter reader (base/frontmatter.h):
 * where the block starts and ends (LF, CRLF, a BOM, blanks after the
 * fences), how scalars become JSON (plain ints and bools only; quoted text
 * stays text; a comma list stays one string), lists and nested mappings,
 * no frontmatter told apart from bad frontmatter, and every refusal
 * (bad YAML, not a mapping, never closed, aliases, too deep, too big, NUL)
 * naming the file's line; frontmatter_list's two ways of splitting a
 * list-valued key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/frontmatter.h"
#include "base/str.h"

static json_t *ok(const char *text, const char **body)
{
    loom_error err = {0};
    json_t *v = frontmatter_parse(text, body, &err);
    if (!v)
        fail_msg("frontmatter refused: %s", err.message);
    assert_true(json_is_object(v));
    return v;
}

static void refused(const char *text, loom_error_code code, const char *needle)
{
    loom_error err = {0};
    const char *body = (const char *)1;
    json_t *v = frontmatter_parse(text, &body, &err);
    if (v) {
        char *d = json_dumps(v, 0);
        fail_msg("accepted %s", d);
    }
    assert_int_equal(err.code, code);
    assert_ptr_equal(body, text);
    if (!strstr(err.message, needle))
        fail_msg("message \"%s\" lacks \"%s\"", err.message, needle);
}

static void a_simple_block_gives_its_keys_and_the_body_after_it(void **state)
{
    const char *text = "---\nname: reviewer\ndescription: Reviews code\n---\nYou review.\n";
    const char *body = NULL;
    json_t *v = ok(text, &body);
    assert_string_equal(json_string_value(json_object_get(v, "name")), "reviewer");
    assert_string_equal(json_string_value(json_object_get(v, "description")), "Reviews code");
    assert_string_equal(body, "You review.\n");
    json_decref(v);
}

static void crlf_line_ends_and_a_bom_work(void **state)
{
    const char *text = "\xEF\xBB\xBF---\r\nname: a\r\ntools: Read, Grep\r\n---\r\nBody\r\n";
    const char *body = NULL;
    json_t *v = ok(text, &body);
    assert_string_equal(json_string_value(json_object_get(v, "name")), "a");
    assert_string_equal(json_string_value(json_object_get(v, "tools")), "Read, Grep");
    assert_string_equal(body, "Body\r\n");
    json_decref(v);
}

static void blanks_after_the_fences_are_allowed_and_the_body_may_be_empty(void **state)
{
    const char *body = NULL;
    json_t *v = ok("---  \nk: v\n--- \t", &body);
    assert_string_equal(json_string_value(json_object_get(v, "k")), "v");
    assert_string_equal(body, "");
    json_decref(v);
}

static void plain_ints_and_bools_are_typed_and_everything_else_is_text(void **state)
{
    const char *text = "---\n"
                       "n: 12\nneg: -3\nzero: 0\noctalish: 017\nbig: 99999999999999999999\n"
                       "t: true\nf: False\nquoted_int: \"12\"\nquoted_bool: 'true'\n"
                       "real: 3.5\nyes_word: yes\nempty:\ntilde: ~\nstr_tag: !!str 5\n"
                       "comma: Bash(git:*), Read\n"
                       "---\n";
    json_t *v = ok(text, NULL);
    assert_int_equal(json_integer_value(json_object_get(v, "n")), 12);
    assert_int_equal(json_integer_value(json_object_get(v, "neg")), -3);
    assert_int_equal(json_integer_value(json_object_get(v, "zero")), 0);
    assert_string_equal(json_string_value(json_object_get(v, "octalish")), "017");
    assert_string_equal(json_string_value(json_object_get(v, "big")), "99999999999999999999");
    assert_true(json_is_true(json_object_get(v, "t")));
    assert_true(json_is_false(json_object_get(v, "f")));
    assert_string_equal(json_string_value(json_object_get(v, "quoted_int")), "12");
    assert_string_equal(json_string_value(json_object_get(v, "quoted_bool")), "true");
    assert_string_equal(json_string_value(json_object_get(v, "real")), "3.5");
    assert_string_equal(json_string_value(json_object_get(v, "yes_word")), "yes");
    assert_true(json_is_null(json_object_get(v, "empty")));
    assert_true(json_is_null(json_object_get(v, "tilde")));
    assert_string_equal(json_string_value(json_object_get(v, "str_tag")), "5");
    assert_string_equal(json_string_value(json_object_get(v, "comma")), "Bash(git:*), Read");
    json_decref(v);
}

static void sequences_become_arrays_and_mappings_objects(void **state)
{
    const char *text = "---\n"
                       "tools:\n  - Read\n  - Bash(git:*)\n"
                       "flow: [a, 2, true]\n"
                       "hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - {type: command, command: \"echo hi\"}\n"
                       "prompt: |\n  line one\n  line two\n"
                       "---\n";
    json_t *v = ok(text, NULL);
    json_t *tools = json_object_get(v, "tools");
    assert_int_equal(json_array_size(tools), 2);
    assert_string_equal(json_string_value(json_array_get(tools, 1)), "Bash(git:*)");
    json_t *flow = json_object_get(v, "flow");
    assert_int_equal(json_integer_value(json_array_get(flow, 1)), 2);
    assert_true(json_is_true(json_array_get(flow, 2)));
    json_t *h = json_array_get(json_object_get(json_object_get(v, "hooks"), "PreToolUse"), 0);
    assert_string_equal(json_string_value(json_object_get(h, "matcher")), "Bash");
    json_t *cmd = json_array_get(json_object_get(h, "hooks"), 0);
    assert_string_equal(json_string_value(json_object_get(cmd, "command")), "echo hi");
    assert_string_equal(json_string_value(json_object_get(v, "prompt")), "line one\nline two\n");
    json_decref(v);
}

static void an_empty_block_or_comments_only_is_an_empty_object(void **state)
{
    const char *body = NULL;
    json_t *v = ok("---\n---\nrest", &body);
    assert_int_equal(json_object_size(v), 0);
    assert_string_equal(body, "rest");
    json_decref(v);
    v = ok("---\n# just a comment\n---\n", NULL);
    assert_int_equal(json_object_size(v), 0);
    json_decref(v);
}

static void a_repeated_key_keeps_the_later_value(void **state)
{
    json_t *v = ok("---\nk: 1\nk: 2\n---\n", NULL);
    assert_int_equal(json_integer_value(json_object_get(v, "k")), 2);
    json_decref(v);
}

static void no_frontmatter_is_its_own_code_and_the_body_is_the_text(void **state)
{
    refused("# Title\n\nno block here\n", FRONTMATTER_ERR_NONE, "no frontmatter");
    refused("", FRONTMATTER_ERR_NONE, "no frontmatter");
    refused("--", FRONTMATTER_ERR_NONE, "no frontmatter");
    refused("\n---\nk: v\n---\n", FRONTMATTER_ERR_NONE, "no frontmatter"); /* not at the very start */
    refused("----\nk: v\n----\n", FRONTMATTER_ERR_NONE, "no frontmatter");
    loom_error err = {0};
    assert_null(frontmatter_parse(NULL, NULL, &err));
    assert_int_equal(err.code, FRONTMATTER_ERR_NONE);
}

static void bad_yaml_names_the_line_of_the_file(void **state)
{
    /* line 1 ---, line 2 name, line 3 the broken one */
    refused("---\nname: a\ndescription: \"unclosed\n---\n", LOOM_ERR_CONFIG, "line ");
    refused("---\nname: a\n  bad: indent\n---\n", LOOM_ERR_CONFIG, "line 3");
    refused("---\nname: a\nlist: [1, 2\n---\n", LOOM_ERR_CONFIG, "line ");
    refused("---\nk: v\n\tx: tab\n---\n", LOOM_ERR_CONFIG, "line 3");
}

static void a_block_that_is_not_a_mapping_is_refused(void **state)
{
    refused("---\n- a\n- b\n---\n", LOOM_ERR_CONFIG, "line 2: the frontmatter must be a mapping");
    refused("---\njust text\n---\n", LOOM_ERR_CONFIG, "must be a mapping");
}

static void a_block_never_closed_is_refused(void **state)
{
    refused("---\nname: a\n", LOOM_ERR_CONFIG, "never closed");
    refused("---", LOOM_ERR_CONFIG, "never closed");
    refused("---\nname: a\n--- trailing words\n", LOOM_ERR_CONFIG, "never closed");
}

static void aliases_and_non_text_keys_are_refused(void **state)
{
    refused("---\na: &x [1, 2]\nb: *x\n---\n", LOOM_ERR_CONFIG, "line 3: aliases (*x) are not supported");
    refused("---\n? [a, b]\n: v\n---\n", LOOM_ERR_CONFIG, "a key must be plain text");
}

static void a_second_document_is_refused(void **state)
{
    refused("---\na: 1\n--- b\n---\n", LOOM_ERR_CONFIG, "only one YAML document");
    refused("---\na: 1\n...\nb: 2\n---\n", LOOM_ERR_CONFIG, "line 4");
}

static void nesting_past_the_cap_is_refused_and_up_to_it_accepted(void **state)
{
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, "---\nk: ");
    for (int i = 1; i < FRONTMATTER_MAX_DEPTH; i++)
        str_putc(&s, '[');
    for (int i = 1; i < FRONTMATTER_MAX_DEPTH; i++)
        str_putc(&s, ']');
    str_puts(&s, "\n---\n");
    json_t *v = ok(str_cstr(&s), NULL);
    json_decref(v);
    str_clear(&s);
    str_puts(&s, "---\nk: ");
    for (int i = 0; i < 5000; i++)
        str_putc(&s, '[');
    str_puts(&s, "\n---\n");
    refused(str_cstr(&s), LOOM_ERR_CONFIG, "nested deeper than 16");
    str_free(&s);
}

static void a_text_over_the_size_cap_is_refused(void **state)
{
    size_t n = FRONTMATTER_MAX_BYTES + 10;
    char *big = malloc(n + 1);
    memcpy(big, "---\nk: v\n---\n", 13);
    memset(big + 13, 'x', n - 13);
    big[n] = '\0';
    refused(big, LOOM_ERR_INVALID_REQUEST, "256 KiB");
    free(big);
}

static void a_nul_escape_and_bad_utf8_are_refused(void **state)
{
    refused("---\nk: \"a\\0b\"\n---\n", LOOM_ERR_CONFIG, "line 2: a value holds a NUL");
    refused("---\nk: \xff\xfe\n---\n", LOOM_ERR_CONFIG, "line 2");
}

/* Joins a frontmatter_list result with '|' for one comparison, frees it. */
static char *joined(char **v)
{
    assert_non_null(v);
    loom_str s = LOOM_STR_INIT;
    for (size_t i = 0; v[i]; i++)
        str_printf(&s, "%s%s", i ? "|" : "", v[i]);
    strv_free(v);
    return str_steal(&s);
}

static void list_is(const char *yaml_value, unsigned flags, const char *want)
{
    json_t *v = json_loads(yaml_value, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    char *got = joined(frontmatter_list(v, flags, NULL));
    if (strcmp(got, want) != 0)
        fail_msg("%s split (flags %u) should be [%s], is [%s]", yaml_value, flags, want, got);
    free(got);
    json_decref(v);
}

static void list_values_split_at_commas_outside_parentheses_and_blanks_when_asked(void **state)
{
    (void)state;
    /* Claude Code's form: commas only, inner blanks kept. */
    list_is("\"Read, Bash(git add:*, git commit:*) ,, Web Fetch \"", 0,
            "Read|Bash(git add:*, git commit:*)|Web Fetch");
    /* The Agent Skills form: blanks separate too, but not inside parentheses. */
    list_is("\"Read Grep\\tBash(git diff *),Edit\"", FRONTMATTER_LIST_BLANKS,
            "Read|Grep|Bash(git diff *)|Edit");
    list_is("\"Read Grep\"", 0, "Read Grep");
    /* An unclosed parenthesis keeps the rest as one item; a stray ')' is text. */
    list_is("\"Bash(a, b\"", 0, "Bash(a, b");
    list_is("\"a), b\"", FRONTMATTER_LIST_BLANKS, "a)|b");
    /* A YAML list: every item split the same way. */
    list_is("[\"Read, Grep\", \"Bash(x y)\"]", FRONTMATTER_LIST_BLANKS, "Read|Grep|Bash(x y)");
    /* Nothing in it: an empty list, not NULL. */
    list_is("\" , \"", 0, "");
    list_is("[]", 0, "");

    loom_str why = LOOM_STR_INIT;
    json_t *bad = json_loads("[\"Read\", 3]", 0, NULL);
    assert_null(frontmatter_list(bad, 0, &why));
    assert_string_equal(str_cstr(&why), "item 2 is not text");
    json_decref(bad);
    str_clear(&why);
    json_t *num = json_integer(3);
    assert_null(frontmatter_list(num, 0, &why));
    assert_int_equal(why.len, 0); /* the caller says what it expected */
    assert_null(frontmatter_list(NULL, 0, &why));
    json_decref(num);
    str_free(&why);
}

static void a_body_loses_its_blank_lines_around_it_but_not_its_indentation(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"\n \t\r\n\n  indented first\nsecond\n\n \n", "  indented first\nsecond"},
        {"text", "text"},
        {"  \n\t\n", ""},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = frontmatter_body_trim(cases[i].in);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("case %zu: the trimmed body should be [%s], is [%s]", i, cases[i].want, got);
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_simple_block_gives_its_keys_and_the_body_after_it),
        cmocka_unit_test(crlf_line_ends_and_a_bom_work),
        cmocka_unit_test(blanks_after_the_fences_are_allowed_and_the_body_may_be_empty),
        cmocka_unit_test(plain_ints_and_bools_are_typed_and_everything_else_is_text),
        cmocka_unit_test(sequences_become_arrays_and_mappings_objects),
        cmocka_unit_test(an_empty_block_or_comments_only_is_an_empty_object),
        cmocka_unit_test(a_repeated_key_keeps_the_later_value),
        cmocka_unit_test(no_frontmatter_is_its_own_code_and_the_body_is_the_text),
        cmocka_unit_test(bad_yaml_names_the_line_of_the_file),
        cmocka_unit_test(a_block_that_is_not_a_mapping_is_refused),
        cmocka_unit_test(a_block_never_closed_is_refused),
        cmocka_unit_test(aliases_and_non_text_keys_are_refused),
        cmocka_unit_test(a_second_document_is_refused),
        cmocka_unit_test(nesting_past_the_cap_is_refused_and_up_to_it_accepted),
        cmocka_unit_test(a_text_over_the_size_cap_is_refused),
        cmocka_unit_test(a_nul_escape_and_bad_utf8_are_refused),
        cmocka_unit_test(list_values_split_at_commas_outside_parentheses_and_blanks_when_asked),
        cmocka_unit_test(a_body_loses_its_blank_lines_around_it_but_not_its_indentation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
