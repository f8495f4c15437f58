/* test_mcp_tool_search.c — ext/mcp/tool_search.c without a manager: the
 * ranking of deferred tools (keywords weighed name over description, ties
 * in order, +required words, select:, /regex/, the result caps), the
 * description's stable listing, and when to defer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ext/mcp/tool_search.h"

static const tool_search_entry tools[] = {
    {"mcp__slack__send_message", "Posts a message to a channel."},
    {"mcp__slack__list_channels", "Lists the channels of the workspace."},
    {"mcp__github__create_issue", "Opens an issue; the body may mention a message."},
    {"mcp__github__search_code", "Searches code across repositories."},
    {"mcp__notes__read", "Reads a note by title."},
    {"mcp__notes__write", "Writes a note; overwrites one with the same title."},
};
#define N (sizeof tools / sizeof *tools)

/* The names ranked for query, as one comma-joined string (or "ERR"). */
static char *rank(const char *query, size_t max)
{
    size_t idx[TOOL_SEARCH_MAX_RESULTS];
    loom_error err;
    loom_error_clear(&err);
    int k = tool_search_rank(tools, N, query, max, idx, &err);
    if (k < 0)
        return strdup("ERR");
    char buf[2048] = "";
    for (int i = 0; i < k; i++) {
        if (i)
            strcat(buf, ",");
        strcat(buf, tools[idx[i]].name);
    }
    return strdup(buf);
}

#define EXPECT(query, max, want)                                                                 \
    do {                                                                                         \
        char *got_ = rank(query, max);                                                           \
        if (strcmp(got_, want) != 0)                                                             \
            fail_msg("%s: got \"%s\", want \"%s\"", query, got_, want);                          \
        free(got_);                                                                              \
    } while (0)

static void test_keywords(void **state)
{
    (void)state;
    /* "message": a name hit (send_message) beats description hits; the
     * two description hits keep their order. */
    EXPECT("message", 0, "mcp__slack__send_message,mcp__github__create_issue");
    /* Case does not matter. */
    EXPECT("MESSAGE", 0, "mcp__slack__send_message,mcp__github__create_issue");
    /* Several words add up: slack twice in a name beats one hit. */
    EXPECT("slack channel", 0, "mcp__slack__list_channels,mcp__slack__send_message");
    /* Ties keep the given order. */
    EXPECT("notes", 0, "mcp__notes__read,mcp__notes__write");
    EXPECT("title", 0, "mcp__notes__read,mcp__notes__write");
    /* Nothing matches: no hits, no error. */
    EXPECT("kubernetes", 0, "");
    /* An exact full name comes first. */
    EXPECT("mcp__notes__write note", 0, "mcp__notes__write,mcp__notes__read");
    /* max_results. */
    EXPECT("mcp", 2, "mcp__slack__send_message,mcp__slack__list_channels");
    EXPECT("mcp", 0, "mcp__slack__send_message,mcp__slack__list_channels,"
                     "mcp__github__create_issue,mcp__github__search_code,mcp__notes__read");
    /* Empty query: an error the model sees. */
    EXPECT("   ", 0, "ERR");
}

static void test_required(void **state)
{
    (void)state;
    /* +github: only github tools, ranked by the other words (a message
     * in the description puts create_issue first). */
    EXPECT("+github message", 0, "mcp__github__create_issue,mcp__github__search_code");
    EXPECT("+github code", 0, "mcp__github__search_code,mcp__github__create_issue");
    /* A required word nobody has: nothing. */
    EXPECT("+jira issue", 0, "");
    /* Required words alone rank too. */
    EXPECT("+notes +write", 0, "mcp__notes__write");
}

static void test_select(void **state)
{
    (void)state;
    /* Exact names, in the order asked, each once; unknown ones skipped;
     * max does not apply. */
    EXPECT("select:mcp__notes__write,mcp__slack__send_message", 1,
           "mcp__notes__write,mcp__slack__send_message");
    EXPECT("select: mcp__notes__read , nope,mcp__notes__read", 0, "mcp__notes__read");
    /* Exact, not a substring. */
    EXPECT("select:mcp__notes", 0, "");
}

static void test_regex(void **state)
{
    (void)state;
    EXPECT("/^mcp__notes__/", 0, "mcp__notes__read,mcp__notes__write");
    /* Names weigh over descriptions; case-insensitive. */
    EXPECT("/CHANNEL/", 0, "mcp__slack__list_channels,mcp__slack__send_message");
    EXPECT("/(read|write)$/", 0, "mcp__notes__read,mcp__notes__write");
    EXPECT("/([/", 0, "ERR");
    /* A pattern built to backtrack ends (match limit), with or without hits. */
    char *got = rank("/(a+)+$/", 0);
    free(got);
}

static void test_description(void **state)
{
    (void)state;
    const char *names[] = {"mcp__b__z", "mcp__a__y", "mcp__c__x"};
    char *d1 = tool_search_description(names, 3);
    char *d2 = tool_search_description(names, 3);
    assert_string_equal(d1, d2); /* the same list: byte for byte the same text */
    const char *list = strstr(d1, "Deferred tools (call ToolSearch to load their schemas): ");
    assert_non_null(list);
    /* In the order given (the manager's stable order), not sorted. */
    assert_string_equal(list + strlen("Deferred tools (call ToolSearch to load their schemas): "),
                        "mcp__b__z, mcp__a__y, mcp__c__x");
    /* Names only: nothing of their descriptions or schemas. */
    assert_null(strstr(d1, "inputSchema"));
    free(d1);
    free(d2);
    char *d3 = tool_search_description(NULL, 0);
    assert_non_null(strstr(d3, "(none)"));
    free(d3);
    /* breaker: a server with 5 000 tools does not put 5 000 names in every
     * request; the first few hundred, and how many more there are. */
    static char bufs[5000][32];
    static const char *many[5000];
    for (int i = 0; i < 5000; i++) {
        snprintf(bufs[i], sizeof bufs[i], "mcp__big__tool_%04d", i);
        many[i] = bufs[i];
    }
    char *d4 = tool_search_description(many, 5000);
    assert_true(strlen(d4) < 12000);
    assert_non_null(strstr(d4, "mcp__big__tool_0000, "));
    assert_null(strstr(d4, "mcp__big__tool_4999"));
    assert_non_null(strstr(d4, "and 4700 more"));
    free(d4);
}

static void test_should_defer(void **state)
{
    (void)state;
    /* 10 % of 200 000 is 20 000. */
    assert_false(tool_search_should_defer(5000, 10000, 200000, 0.10));
    assert_true(tool_search_should_defer(15000, 10000, 200000, 0.10));
    assert_true(tool_search_should_defer(30000, 0, 200000, 0.10));
    assert_false(tool_search_should_defer(20000, 0, 200000, 0.10)); /* at the line: not past it */
    /* No MCP tools, no window, a share of 0: never. */
    assert_false(tool_search_should_defer(0, 50000, 200000, 0.10));
    assert_false(tool_search_should_defer(30000, 0, 0, 0.10));
    assert_false(tool_search_should_defer(30000, 0, 200000, 0.0));
    assert_false(tool_search_should_defer(30000, 0, 200000, -1.0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keywords),    cmocka_unit_test(test_required),
        cmocka_unit_test(test_select),      cmocka_unit_test(test_regex),
        cmocka_unit_test(test_description), cmocka_unit_test(test_should_defer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
