/* test_cli_view.c — how the REPL shows what the agent does: word wrapping
 * (wrap.c), code highlighting (highlight.c), folded results (fold.c), the
 * diff view (diff_view.c), the TodoWrite list and a command's live tail
 * (tool_view.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "surfaces/cli/diff_view.h"
#include "surfaces/cli/fold.h"
#include "surfaces/cli/highlight.h"
#include "surfaces/cli/render.h"
#include "surfaces/cli/tool_view.h"
#include "surfaces/cli/wrap.h"

static char *wrap(const char *s, int width)
{
    loom_str out = LOOM_STR_INIT;
    wrap_text(s, strlen(s), width, &out);
    return str_steal(&out);
}

/* Every line's display width is at most width. */
static void assert_fits(const char *text, int width)
{
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        assert_true(render_display_width(p, n) <= (size_t)width);
        p += n + (p[n] == '\n');
    }
}

static void wrapping_breaks_between_words_and_never_inside_one(void **state)
{
    (void)state;
    char *w = wrap("the quick brown fox jumps over the lazy dog", 16);
    assert_string_equal(w, "the quick brown\nfox jumps over\nthe lazy dog");
    free(w);
    w = wrap("short line\nanother", 40);
    assert_string_equal(w, "short line\nanother"); /* the text's own newlines stay */
    free(w);
}

static void a_word_longer_than_the_line_is_broken_hard(void **state)
{
    (void)state;
    char *w = wrap("see abcdefghijklmnopqrstuvwxyz now", 10);
    assert_string_equal(w, "see\nabcdefghij\nklmnopqrst\nuvwxyz now");
    assert_fits(w, 10);
    free(w);
}

static void utf8_characters_and_escapes_are_never_cut(void **state)
{
    (void)state;
    /* Ten two-byte characters in a six-column line: cut between characters. */
    char *w = wrap("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 6);
    assert_string_equal(w, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\n\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    free(w);
    /* A style on where the line breaks ends before the break and starts again after. */
    w = wrap("\x1b[1mbold words here\x1b[0m", 10);
    assert_string_equal(w, "\x1b[1mbold words\x1b[0m\n\x1b[1mhere\x1b[0m");
    assert_fits(w, 10);
    free(w);
}

static void a_broken_list_item_goes_on_under_its_text(void **state)
{
    (void)state;
    char *w = wrap("  \xe2\x80\xa2 one two three four", 14);
    assert_string_equal(w, "  \xe2\x80\xa2 one two\n    three four");
    free(w);
    w = wrap("12. alpha beta gamma", 12);
    assert_string_equal(w, "12. alpha\n    beta\n    gamma");
    free(w);
}

typedef struct spans {
    char text[512];
} spans;

/* "[k:int]" for each piece that is not plain. */
static void collect(void *ctx, hl_class cls, const char *s, size_t n)
{
    spans *sp = ctx;
    static const char tag[] = "pkscn";
    size_t len = strlen(sp->text);
    if (cls == HL_PLAIN)
        snprintf(sp->text + len, sizeof sp->text - len, "%.*s", (int)n, s);
    else
        snprintf(sp->text + len, sizeof sp->text - len, "[%c:%.*s]", tag[cls], (int)n, s);
}

static const char *hl(const char *lang, hl_state *st, const char *line)
{
    static spans sp;
    sp.text[0] = '\0';
    highlight_line(highlight_lang(lang, strlen(lang)), st, line, strlen(line), collect, &sp);
    return sp.text;
}

static void code_gets_keywords_strings_comments_and_numbers(void **state)
{
    (void)state;
    hl_state st = {0};
    assert_string_equal(hl("c", &st, "return \"x\" + 42; // done"),
                        "[k:return] [s:\"x\"] + [n:42]; [c:// done]");
    assert_string_equal(hl("python", &st, "def f(): # note"), "[k:def] f(): [c:# note]");
    assert_string_equal(hl("sh", &st, "echo $# 'a b'"), "[k:echo] $# [s:'a b']");
    assert_string_equal(hl("json", &st, "{\"k\": true, \"n\": -1}"),
                        "{[s:\"k\"]: [k:true], [s:\"n\"]: [n:-1]}");
    assert_string_equal(hl("rust", &st, "let mut x = 1;"), "[k:let] [k:mut] x = [n:1];");
    /* A keyword inside a word is not one. */
    assert_string_equal(hl("go", &st, "format(iffy)"), "format(iffy)");
}

static void a_block_comment_goes_on_to_the_next_line(void **state)
{
    (void)state;
    hl_state st = {0};
    assert_string_equal(hl("ts", &st, "const a = 1; /* start"), "[k:const] a = [n:1]; [c:/* start]");
    assert_true(st.in_comment);
    assert_string_equal(hl("ts", &st, "still */ let"), "[c:still */] [k:let]");
    assert_false(st.in_comment);
    /* Python's triple-quoted string too. */
    hl_state py = {0};
    assert_string_equal(hl("py", &py, "x = \"\"\"doc"), "x = [s:\"\"\"doc]");
    assert_string_equal(hl("py", &py, "end\"\"\" if"), "[s:end\"\"\"] [k:if]");
}

static void an_unknown_language_is_not_highlighted(void **state)
{
    (void)state;
    assert_null(highlight_lang("cobol", 5));
    assert_non_null(highlight_lang("TypeScript", 10));
    hl_state st = {0};
    assert_string_equal(hl("cobol", &st, "MOVE 1 TO X"), "MOVE 1 TO X");
}

static void a_highlighted_code_block_keeps_its_language_label(void **state)
{
    (void)state;
    const char *md = "```python\nreturn 1\n```\n";
    loom_str out = LOOM_STR_INIT;
    render_markdown(md, strlen(md), true, 80, &out);
    assert_non_null(strstr(str_cstr(&out), "python"));
    assert_non_null(strstr(str_cstr(&out), "\x1b[35mreturn"));
    str_clear(&out);
    render_markdown(md, strlen(md), false, 80, &out);
    assert_null(strchr(str_cstr(&out), 0x1b)); /* no colour: no escapes */
    assert_non_null(strstr(str_cstr(&out), "python"));
    str_free(&out);
}

static void rendered_prose_wraps_at_the_width(void **state)
{
    (void)state;
    const char *md = "Wrapping keeps every word whole at any terminal width you pick.\n";
    loom_str out = LOOM_STR_INIT;
    render_markdown(md, strlen(md), false, 20, &out);
    assert_string_equal(str_cstr(&out), "Wrapping keeps every\nword whole at any\nterminal width you\npick.\n");
    str_free(&out);
}

static void folds_are_kept_newest_first_and_the_oldest_go(void **state)
{
    (void)state;
    fold_clear();
    assert_null(fold_get(1, NULL));
    fold_push("first", "a\n", 2);
    fold_push("second", "b\n", 2);
    const char *title;
    assert_string_equal(fold_get(1, &title), "b\n");
    assert_string_equal(title, "second");
    assert_string_equal(fold_get(2, &title), "a\n");
    for (int i = 0; i < FOLD_KEEP; i++)
        fold_push("more", "m\n", 2);
    assert_int_equal(fold_count(), FOLD_KEEP);
    assert_string_equal(fold_get(FOLD_KEEP, &title), "m\n"); /* first and second are gone */
    fold_clear();
}

static void the_fold_line_says_how_to_expand(void **state)
{
    (void)state;
    term_out t = {.color = false};
    loom_str out = LOOM_STR_INIT;
    fold_line(&t, &out, 42, NULL);
    assert_string_equal(str_cstr(&out), "     \xe2\x80\xa6 +42 lines (Ctrl-O to expand)\n");
    str_free(&out);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void an_edit_shows_its_diff_with_the_files_line_numbers(void **state)
{
    (void)state;
    char dir[] = "/tmp/loom-view-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/a.c", dir);
    write_file(path, "l1\nl2\nl3\nl4\nl5\nold line\nl7\n");
    json_t *in = json_pack("{s:s,s:s,s:s}", "file_path", path, "old_string", "old line",
                           "new_string", "new line");
    bool in_file = false;
    json_t *patch = diff_view_patch_for("Edit", in, NULL, &in_file);
    assert_non_null(patch);
    assert_true(in_file);
    term_out t = {.color = false};
    loom_str out = LOOM_STR_INIT;
    diff_view_render(&t, &out, patch, "  ", 80, 0, NULL);
    assert_string_equal(str_cstr(&out), "  3   l3\n  4   l4\n  5   l5\n  6 - old line\n"
                                        "  6 + new line\n  7   l7\n");
    /* With colour: red and green. */
    t.color = true;
    str_clear(&out);
    diff_view_render(&t, &out, patch, "  ", 80, 0, NULL);
    assert_non_null(strstr(str_cstr(&out), "\x1b[31m- old line"));
    assert_non_null(strstr(str_cstr(&out), "\x1b[32m+ new line"));
    long added, removed;
    diff_view_counts(patch, &added, &removed);
    assert_int_equal(added, 1);
    assert_int_equal(removed, 1);
    json_decref(patch);
    json_decref(in);
    /* A Write of a new file: every line added. */
    snprintf(path, sizeof path, "%s/new.txt", dir);
    in = json_pack("{s:s,s:s}", "file_path", path, "content", "x\ny\n");
    patch = diff_view_patch_for("Write", in, NULL, NULL);
    t.color = false;
    str_clear(&out);
    size_t hidden = 0;
    diff_view_render(&t, &out, patch, "", 80, 1, &hidden);
    assert_string_equal(str_cstr(&out), "1 + x\n");
    assert_int_equal(hidden, 1);
    json_decref(patch);
    json_decref(in);
    str_free(&out);
    snprintf(path, sizeof path, "%s/a.c", dir);
    unlink(path);
    rmdir(dir);
}

static void an_edit_whose_text_is_not_in_the_file_is_said_to_be(void **state)
{
    (void)state;
    json_t *in = json_pack("{s:s,s:s,s:s}", "file_path", "/nonexistent/x.c", "old_string",
                           "a\nb", "new_string", "a\nc");
    bool in_file = true;
    json_t *patch = diff_view_patch_for("Edit", in, NULL, &in_file);
    assert_non_null(patch);
    assert_false(in_file);
    term_out t = {.color = false};
    loom_str out = LOOM_STR_INIT;
    diff_view_render(&t, &out, patch, "", 80, 0, NULL);
    assert_string_equal(str_cstr(&out), "1   a\n2 - b\n2 + c\n");
    str_free(&out);
    json_decref(patch);
    json_decref(in);
}

static void a_diff_shows_the_files_text_safely(void **state)
{
    (void)state;
    json_t *patch = json_pack("[{s:i,s:i,s:i,s:i,s:[s]}]", "oldStart", 1, "oldLines", 0,
                              "newStart", 1, "newLines", 1, "lines", "+\x1b[2Jevil");
    term_out t = {.color = false};
    loom_str out = LOOM_STR_INIT;
    diff_view_render(&t, &out, patch, "", 80, 0, NULL);
    assert_null(strchr(str_cstr(&out), 0x1b));
    str_free(&out);
    json_decref(patch);
}

static void the_todo_list_strikes_done_items_and_bolds_the_current_one(void **state)
{
    (void)state;
    json_t *todos = json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "content", "write", "status",
                              "completed", "content", "test", "status", "in_progress", "content",
                              "ship", "status", "pending");
    term_out t = {.color = true};
    loom_str out = LOOM_STR_INIT;
    tool_view_todos(&t, &out, todos, "> ", 80);
    const char *s = str_cstr(&out);
    assert_non_null(strstr(s, "\xe2\x9c\x93 ")); /* ✓ */
    assert_non_null(strstr(s, "\x1b[2;9mwrite"));
    assert_non_null(strstr(s, "\x1b[1mtest"));
    assert_non_null(strstr(s, "ship"));
    t.color = false;
    str_clear(&out);
    tool_view_todos(&t, &out, todos, "> ", 80);
    assert_null(strchr(str_cstr(&out), 0x1b));
    assert_int_equal(strncmp(str_cstr(&out), "> \xe2\x9c\x93 write\n", 12), 0);
    str_free(&out);
    json_decref(todos);
}

static void the_live_tail_is_the_last_lines_with_a_progress_bars_last_state(void **state)
{
    (void)state;
    const char *text = "l1\nl2\nl3\nl4\nl5\nl6\n10%\r50%\r90%\n";
    loom_str out = LOOM_STR_INIT;
    tool_view_tail(text, strlen(text), 5, "> ", 80, &out);
    assert_string_equal(str_cstr(&out), "> l3\n> l4\n> l5\n> l6\n> 90%");
    str_clear(&out);
    tool_view_tail("only", 4, 5, "", 80, &out);
    assert_string_equal(str_cstr(&out), "only");
    str_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wrapping_breaks_between_words_and_never_inside_one),
        cmocka_unit_test(a_word_longer_than_the_line_is_broken_hard),
        cmocka_unit_test(utf8_characters_and_escapes_are_never_cut),
        cmocka_unit_test(a_broken_list_item_goes_on_under_its_text),
        cmocka_unit_test(code_gets_keywords_strings_comments_and_numbers),
        cmocka_unit_test(a_block_comment_goes_on_to_the_next_line),
        cmocka_unit_test(an_unknown_language_is_not_highlighted),
        cmocka_unit_test(a_highlighted_code_block_keeps_its_language_label),
        cmocka_unit_test(rendered_prose_wraps_at_the_width),
        cmocka_unit_test(folds_are_kept_newest_first_and_the_oldest_go),
        cmocka_unit_test(the_fold_line_says_how_to_expand),
        cmocka_unit_test(an_edit_shows_its_diff_with_the_files_line_numbers),
        cmocka_unit_test(an_edit_whose_text_is_not_in_the_file_is_said_to_be),
        cmocka_unit_test(a_diff_shows_the_files_text_safely),
        cmocka_unit_test(the_todo_list_strikes_done_items_and_bolds_the_current_one),
        cmocka_unit_test(the_live_tail_is_the_last_lines_with_a_progress_bars_last_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
