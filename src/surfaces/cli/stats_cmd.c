/* stats_cmd.c — `loom stats`: loom_stats_json printed as it is (--json) or
 * as a table, one row per group. On a terminal each row gets a bar of its
 * total tokens, scaled to the largest row and drawn in eighths of a cell
 * (▏▎▍▌▋▊▉█), so a day-by-day table reads as a chart; piped, the table has
 * no bars, so scripts and diffs see plain columns. */
#include "surfaces/cli/stats_cmd.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loom.h"

#define BAR_CELLS 20

static const char *const eighths[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};

static void usage(FILE *to)
{
    fputs("usage: loom stats [--json] [--since YYYY-MM-DD] [--by day|model|project|agent|purpose]\n"
          "                  [--server URL]   (a loom serve store; token in $LOOM_SERVER_TOKEN)\n",
          to);
}

static long long tokens(const json_t *row, const char *key)
{
    return (long long)json_integer_value(json_object_get(json_object_get(row, "tokens"), key));
}

static long long count(const json_t *row, const char *key)
{
    return (long long)json_integer_value(json_object_get(row, key));
}

/* "$0.1234", "unknown" when no call has a price, a trailing '*' when some do not. */
static void cost_text(const json_t *row, char *buf, size_t n)
{
    const json_t *c = json_object_get(row, "cost_usd");
    if (!json_is_number(c))
        snprintf(buf, n, "unknown");
    else
        snprintf(buf, n, "$%.4f%s", json_number_value(c), count(row, "unpriced_calls") ? "*" : "");
}

static void bar(long long value, long long max)
{
    if (max <= 0)
        return;
    long long units = (value * BAR_CELLS * 8 + max / 2) / max;
    fputs("  ", stdout);
    for (long long i = 0; i < units / 8; i++)
        fputs("█", stdout);
    fputs(eighths[units % 8], stdout);
}

static void print_row(const json_t *row, const char *key, bool tty, long long max)
{
    char cost[32], fail[16];
    cost_text(row, cost, sizeof cost);
    long long calls = count(row, "tool_calls");
    if (calls)
        snprintf(fail, sizeof fail, "%.1f%%",
                 100.0 * (double)count(row, "tool_failures") / (double)calls);
    else
        snprintf(fail, sizeof fail, "-");
    printf("%-24s %6lld %6lld %10lld %10lld %10lld %10lld %12s %6lld %6s", key,
           count(row, "runs"), count(row, "model_calls"), tokens(row, "input"),
           tokens(row, "output"), tokens(row, "cache_read"), tokens(row, "cache_write"), cost,
           calls, fail);
    if (tty)
        bar(tokens(row, "total"), max);
    putchar('\n');
}

static void print_table(const json_t *o, bool tty)
{
    const json_t *rows = json_object_get(o, "rows");
    long long max = 0;
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
        if (tokens(row, "total") > max)
            max = tokens(row, "total");
    printf("%-24s %6s %6s %10s %10s %10s %10s %12s %6s %6s\n",
           json_string_value(json_object_get(o, "by")), "runs", "calls", "input", "output",
           "cache_read", "cache_wr", "cost", "tools", "fail");
    bool unpriced = false;
    json_array_foreach(rows, i, row) {
        print_row(row, json_string_value(json_object_get(row, "key")), tty, max);
        unpriced |= count(row, "unpriced_calls") > 0;
    }
    print_row(json_object_get(o, "total"), "total", false, 0);
    if (unpriced)
        puts("* some calls are of a model without a known price: their cost is not included");
    const json_t *bad = json_object_get(o, "unreadable");
    long long records = count(bad, "records"), files = count(bad, "files");
    if (records)
        printf("%lld unreadable record%s in %lld file%s (skipped)\n", records,
               records == 1 ? "" : "s", files, files == 1 ? "" : "s");
}

int stats_cmd_main(int argc, char **argv)
{
    bool as_json = false;
    const char *since = NULL, *by = NULL, *server = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else if (strcmp(argv[i], "--since") == 0 && i + 1 < argc)
            since = argv[++i];
        else if (strcmp(argv[i], "--by") == 0 && i + 1 < argc)
            by = argv[++i];
        else if (strcmp(argv[i], "--server") == 0 && i + 1 < argc)
            server = argv[++i];
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "loom stats: unknown argument %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    loom_status st = {0};
    /* The token from the environment, not argv: a command line is seen by
     * every user of the machine (ps). */
    char *text = server ? loom_stats_server_json(server, getenv("LOOM_SERVER_TOKEN"), by, since, &st)
                        : loom_stats_json(by, since, &st);
    if (!text) {
        fprintf(stderr, "loom %s\n", st.message);
        return st.code == LOOM_ERR_INVALID_REQUEST ? 2 : 1;
    }
    int rc = 0;
    if (as_json) {
        puts(text);
    } else {
        json_error_t err;
        json_t *o = json_loads(text, 0, &err);
        if (o)
            print_table(o, isatty(STDOUT_FILENO));
        else
            rc = 1;
        json_decref(o);
    }
    free(text);
    return rc;
}
