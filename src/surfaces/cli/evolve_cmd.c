/* evolve_cmd.c — `loom evolve review|audit|stats` (docs/cli.md, docs/evolve.md):
 * loom_evolve_json printed as it is (--json) or as text. `review edit ID`
 * opens the proposal's file in $VISUAL or $EDITOR (through sh, so the
 * variable may carry arguments), waits for it, and has the file checked
 * again. Text output goes through base/termsafe.h: what it shows comes
 * from files a repository may ship. Runs on the main thread; no state. */
#include "surfaces/cli/evolve_cmd.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/termsafe.h"
#include "loom.h"

/* An error names files and ids a repository chose: shown visibly too. */
static void say_error(const char *msg)
{
    char *safe = termsafe_dup(msg ? msg : "");
    fprintf(stderr, "loom evolve: %s\n", safe);
    free(safe);
}

static void usage(FILE *to)
{
    fputs("usage: loom evolve review [show|accept|edit|reject ID] [--json] [--cwd DIR]\n"
          "       loom evolve audit [--json] [--cwd DIR]\n"
          "       loom evolve stats [--json] [--cwd DIR]\n",
          to);
}

static const char *s(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static long long n(const json_t *o, const char *k)
{
    return (long long)json_integer_value(json_object_get(o, k));
}

static void print_review(FILE *out, const json_t *list)
{
    if (!json_array_size(list)) {
        fprintf(out, "%s\n", "no proposals wait for review");
        return;
    }
    fprintf(out, "%zu proposal%s waiting (loom evolve review show|accept|edit|reject ID):\n",
           json_array_size(list), json_array_size(list) == 1 ? "" : "s");
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r) {
        fprintf(out, "  %-40s %s\n", s(r, "id"), s(r, "description"));
    }
}

static void print_audit(FILE *out, const json_t *list)
{
    if (!json_array_size(list)) {
        fprintf(out, "%s\n", "no accepted constraints");
        return;
    }
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) {
        const char *rule = s(c, "rule");
        fprintf(out, "%s  %s %s  age %lldd  hits %lld  overrides %lld  sessions since %lld\n", s(c, "id"),
               s(c, "behavior"), *rule ? rule : s(c, "line"), n(c, "age_days"), n(c, "hits"),
               n(c, "overrides"), n(c, "sessions_since"));
        const json_t *last = json_object_get(c, "last_blocked");
        if (json_is_object(last))
            fprintf(out, "    last blocked: \"%s\" (session %s, %s)\n", s(last, "task"),
                   s(last, "session"), s(last, "ts"));
        else
            fprintf(out, "%s\n", "    last blocked: never");
        const json_t *why = json_object_get(c, "retire_why");
        if (json_array_size(why)) {
            fprintf(out, "    proposed for retiring:");
            size_t k;
            json_t *w;
            json_array_foreach(why, k, w) {
                fprintf(out, "%s %s", k ? ";" : "", json_string_value(w));
            }
            fputc('\n', out);
        }
    }
}

static void print_stats(FILE *out, const json_t *o)
{
    const json_t *c = json_object_get(o, "constraint_growth");
    const json_t *k = json_object_get(o, "capability_growth");
    const json_t *m = json_object_get(o, "mis_injection");
    fprintf(out, "constraint growth: %lld accepted\n", n(c, "accepted"));
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(c, "by_day"), i, d) {
        fprintf(out, "  %s  +%lld  = %lld\n", s(d, "day"), n(d, "accepted"), n(d, "total"));
    }
    fprintf(out, "capability growth: %lld skill%s accepted, %lld agent%s\n", n(k, "skills_accepted"),
           n(k, "skills_accepted") == 1 ? "" : "s", n(k, "agents_accepted"),
           n(k, "agents_accepted") == 1 ? "" : "s");
    json_array_foreach(json_object_get(k, "by_day"), i, d) {
        fprintf(out, "  %s  +%lld  = %lld\n", s(d, "day"), n(d, "accepted"), n(d, "total"));
    }
    const json_t *rate = json_object_get(m, "rate");
    if (json_is_number(rate))
        fprintf(out, "mis-injection rate: %.4f (%lld of %lld recalled items unused, over %lld runs)\n",
               json_number_value(rate), n(m, "unused"), n(m, "items"), n(m, "runs"));
    else
        fprintf(out, "%s\n", "mis-injection rate: none recalled yet");
    if (n(m, "sessions_missing"))
        fprintf(out, "  %lld items left out: their session files were not found\n",
               n(m, "sessions_missing"));
}

static void print_decision(FILE *out, const char *verb, const json_t *o)
{
    if (!strcmp(verb, "accept")) {
        if (json_object_get(o, "constraint"))
            fprintf(out, "accepted %s: %s %s, constraint %s\n", s(o, "id"), s(o, "behavior"),
                   *s(o, "rule") ? s(o, "rule") : s(o, "line"), s(o, "constraint"));
        else
            fprintf(out, "accepted %s: now at %s\n", s(o, "id"), s(o, "path"));
    } else if (!strcmp(verb, "reject")) {
        fprintf(out, "rejected %s: it will not be proposed again\n", s(o, "id"));
    } else {
        fprintf(out, "edited %s: %s still reads\n", s(o, "id"), s(o, "path"));
    }
}

/* $VISUAL or $EDITOR on path; 0 when it exited 0. */
static int run_editor(const char *path)
{
    const char *ed = getenv("VISUAL");
    if (!ed || !*ed)
        ed = getenv("EDITOR");
    if (!ed || !*ed) {
        fprintf(stderr, "loom evolve: set EDITOR (or VISUAL) to edit a proposal\n");
        return -1;
    }
    /* The command through the environment, the path as $1: neither is
     * ever spliced into shell text. */
    setenv("LOOM_EDITOR_CMD", ed, 1);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "$LOOM_EDITOR_CMD \"$1\"", "sh", path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int evolve_cmd_main(int argc, char **argv)
{
    bool as_json = false;
    const char *cwd = NULL;
    const char *words[3] = {NULL, NULL, NULL};
    int nw = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json"))
            as_json = true;
        else if (!strcmp(argv[i], "--cwd") && i + 1 < argc)
            cwd = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] != '-' && nw < 3)
            words[nw++] = argv[i];
        else {
            fprintf(stderr, "loom evolve: unknown argument %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    const char *verb = words[0], *id = NULL;
    if (verb && !strcmp(verb, "review") && words[1]) {
        verb = words[1];
        id = words[2];
        if (strcmp(verb, "show") && strcmp(verb, "accept") && strcmp(verb, "edit") &&
            strcmp(verb, "reject")) {
            fprintf(stderr, "loom evolve review: unknown command %s\n", verb);
            usage(stderr);
            return 2;
        }
    } else if (!verb || (strcmp(verb, "review") && strcmp(verb, "audit") && strcmp(verb, "stats")) ||
               words[1]) {
        usage(stderr);
        return 2;
    }
    loom_status st = {0};
    if (!strcmp(verb, "edit")) {
        char *shown = loom_evolve_json(cwd, "show", id, &st);
        if (!shown) {
            say_error(st.message);
            return st.code == LOOM_ERR_INVALID_REQUEST ? 2 : 1;
        }
        json_t *o = json_loads(shown, 0, NULL);
        free(shown);
        int rc = run_editor(s(o, "path"));
        json_decref(o);
        if (rc != 0) {
            fprintf(stderr, "loom evolve: the editor failed; the proposal is as it was left\n");
            return 1;
        }
        verb = "edited";
    }
    char *text = loom_evolve_json(cwd, verb, id, &st);
    if (!text) {
        say_error(st.message);
        return st.code == LOOM_ERR_INVALID_REQUEST ? 2 : 1;
    }
    if (as_json) {
        puts(text);
        free(text);
        return 0;
    }
    json_t *o = json_loads(text, 0, NULL);
    free(text);
    /* Everything shown comes from files a repository may have shipped
     * (proposal text, names, descriptions, ledgers): printed in its
     * visible form, so an escape sequence cannot hide or forge what the
     * person is deciding about. */
    FILE *out = termsafe_fopen(stdout);
    if (!out) {
        json_decref(o);
        fprintf(stderr, "loom evolve: out of memory\n");
        return 1;
    }
    if (!strcmp(verb, "review"))
        print_review(out, o);
    else if (!strcmp(verb, "show"))
        fprintf(out, "# %s (%s)\n\n%s", s(o, "id"), s(o, "path"), s(o, "text"));
    else if (!strcmp(verb, "audit"))
        print_audit(out, o);
    else if (!strcmp(verb, "stats"))
        print_stats(out, o);
    else
        print_decision(out, verb, o);
    json_decref(o);
    fclose(out);
    return 0;
}
