/* test_session_listing.c — session titles and descriptions
 * (session/listing.h): the title a first prompt gives, what a session file
 * is described as, and the listing of a project's sessions newest first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json.h"
#include "session/listing.h"
#include "session/record.h"
#include "session/store.h"
#include "session/transcript.h"

static void title_is_first_visible_line(void **state)
{
    (void)state;
    char *t = session_title_from_prompt("\n  \n   fix   the\tparser  \nand more lines");
    assert_string_equal(t, "fix the parser");
    free(t);
    assert_null(session_title_from_prompt("   \n\t\n"));
    assert_null(session_title_from_prompt(NULL));
    /* Control bytes never reach a title. */
    t = session_title_from_prompt("a\x1b]0;x\x07 b");
    assert_string_equal(t, "a]0;x b");
    free(t);
}

static void long_title_is_cut_at_a_word(void **state)
{
    (void)state;
    const char *p = "refactor the session store so that listing sessions never loads a "
                    "whole transcript into memory";
    char *t = session_title_from_prompt(p);
    size_t len = strlen(t);
    assert_true(len > 3);
    assert_string_equal(t + len - 3, "\xe2\x80\xa6");
    /* A word boundary: the text before "…" is a prefix of the prompt that
     * ends where a word did. */
    assert_memory_equal(t, p, len - 3);
    assert_int_equal(p[len - 3], ' ');
    size_t chars = 0;
    for (const char *c = t; *c; c++)
        chars += ((unsigned char)*c & 0xc0) != 0x80;
    assert_true(chars <= SESSION_TITLE_MAX);
    free(t);
    /* One long word is cut inside it, never inside a character. */
    char word[400] = "";
    for (int i = 0; i < 100; i++)
        strcat(word, "\xc3\xa9");
    t = session_title_from_prompt(word);
    chars = 0;
    for (const char *c = t; *c; c++)
        chars += ((unsigned char)*c & 0xc0) != 0x80;
    assert_int_equal(chars, SESSION_TITLE_MAX);
    assert_string_equal(t + strlen(t) - 3, "\xe2\x80\xa6");
    assert_int_equal(((unsigned char)t[strlen(t) - 4] & 0xc0), 0x80);
    free(t);
}

static void bash_blocks_do_not_title(void **state)
{
    (void)state;
    char *t = session_title_from_prompt("<bash-input>ls</bash-input>\n<bash-stdout>a\nb"
                                        "</bash-stdout><bash-stderr></bash-stderr>\n\n"
                                        "what are these files?");
    assert_string_equal(t, "what are these files?");
    free(t);
}

static void describe_reads_titles_counts_and_times(void **state)
{
    (void)state;
    const char *text =
        "{\"type\":\"session-meta\",\"id\":\"m\",\"timestamp\":\"2026-01-02T00:00:00.000Z\","
        "\"createdAt\":\"2026-01-01T00:00:00.000Z\"}\n"
        "not json at all\n"
        "{\"type\":\"message\",\"id\":\"u\",\"role\":\"user\",\"content\":[{\"type\":\"text\","
        "\"text\":\"first prompt\\nsecond line\"}]}\n"
        "{\"type\":\"title\",\"id\":\"t\",\"title\":\"first prompt\"}\n"
        "{\"type\":\"message\",\"id\":\"a\",\"role\":\"assistant\",\"content\":[{\"type\":"
        "\"text\",\"text\":\"done\"}]}\n"
        "{\"type\":\"message\",\"id\":\"n\",\"role\":\"user\",\"providerData\":{\"skipRun\":"
        "true},\"content\":[{\"type\":\"text\",\"text\":\"Interrupted by user\"}]}\n"
        "{\"type\":\"message\",\"id\":\"e\",\"role\":\"assistant\",\"content\":[]}\n";
    json_t *o = session_describe_text("sid", "/p/sid.jsonl", text, strlen(text));
    assert_string_equal(json_get_str(o, "id", ""), "sid");
    assert_string_equal(json_get_str(o, "title", ""), "first prompt");
    assert_string_equal(json_get_str(o, "first_prompt", ""), "first prompt\nsecond line");
    assert_string_equal(json_get_str(o, "created", ""), "2026-01-01T00:00:00.000Z");
    /* A prompt and a reply with text; the note and the empty reply do not count. */
    assert_int_equal(json_get_int(o, "messages", -1), 2);
    json_decref(o);

    /* A custom title (a rename) wins over the first prompt's. */
    const char *renamed =
        "{\"type\":\"message\",\"id\":\"u\",\"role\":\"user\",\"content\":[{\"type\":\"text\","
        "\"text\":\"hello\"}]}\n"
        "{\"type\":\"title\",\"id\":\"t\",\"title\":\"hello\"}\n"
        "{\"type\":\"custom-title\",\"id\":\"c\",\"customTitle\":\"My work\"}";
    o = session_describe_text("sid", NULL, renamed, strlen(renamed));
    assert_string_equal(json_get_str(o, "title", ""), "My work");
    assert_null(json_object_get(o, "path"));
    json_decref(o);

    /* Nothing but garbage: an object with the id and no title. */
    o = session_describe_text("sid", NULL, "\x01\x02{{{", 5);
    assert_non_null(o);
    assert_null(json_object_get(o, "title"));
    assert_int_equal(json_get_int(o, "messages", -1), 0);
    json_decref(o);
}

static void list_is_newest_first_without_empty_sessions(void **state)
{
    (void)state;
    char home[] = "/tmp/loom-listing-XXXXXX";
    assert_non_null(mkdtemp(home));
    setenv("LOOM_HOME", home, 1);
    char *dir = store_project_dir("/p/list");
    loom_error err;
    const char *prompts[] = {"older prompt", NULL, "newer prompt"};
    char ids[3][64];
    for (int i = 0; i < 3; i++) {
        transcript *t = transcript_create(dir, "/p/list", "anthropic", "m", &err);
        assert_non_null(t);
        snprintf(ids[i], sizeof ids[i], "%s", transcript_session_id(t));
        if (prompts[i]) {
            assert_int_equal(transcript_append_new(t, record_user_text(prompts[i]), &err), 0);
            assert_int_equal(transcript_append_new(t, record_title(prompts[i], "first-prompt"),
                                                   &err), 0);
        }
        transcript_free(t);
        usleep(20000); /* distinct modification times, oldest first */
    }
    json_t *arr = session_list("/p/list", NULL);
    assert_int_equal(json_array_size(arr), 2);
    assert_string_equal(json_get_str(json_array_get(arr, 0), "title", ""), "newer prompt");
    assert_string_equal(json_get_str(json_array_get(arr, 1), "title", ""), "older prompt");
    assert_string_equal(json_get_str(json_array_get(arr, 1), "id", ""), ids[0]);
    assert_non_null(json_get_str(json_array_get(arr, 0), "modified", NULL));
    assert_non_null(strstr(json_get_str(json_array_get(arr, 0), "path", ""), ids[2]));
    assert_null(json_object_get(json_array_get(arr, 0), "_mtime_ns"));
    json_decref(arr);
    /* The session with no prompt yet is listed when it is the one kept. */
    arr = session_list("/p/list", ids[1]);
    assert_int_equal(json_array_size(arr), 3);
    json_decref(arr);
    /* An ambiguous prefix names the candidates with their titles. */
    char prefix[4] = {ids[0][0], ids[0][1], ids[0][2], 0};
    char *path = NULL;
    assert_true(session_find(prefix, &path, &err) < 0);
    assert_non_null(strstr(err.message, "newer prompt"));
    assert_non_null(strstr(err.message, "older prompt"));
    assert_non_null(strstr(err.message, "(no prompt yet)"));
    free(dir);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", home);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(title_is_first_visible_line),
        cmocka_unit_test(long_title_is_cut_at_a_word),
        cmocka_unit_test(bash_blocks_do_not_title),
        cmocka_unit_test(describe_reads_titles_counts_and_times),
        cmocka_unit_test(list_is_newest_first_without_empty_sessions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
