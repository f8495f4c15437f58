/* bench_ext.c — what installed extensions cost before the model sees
 * anything, and at every turn.
 *
 * Load: loom_agent_new for a workspace holding N skills and N/3 custom
 * commands (N = 0, 30, 300; trusted, so the project's folders are read),
 * the median of R runs each, reported with its ratio to N = 0 in the same
 * run — agent creation reads every SKILL.md and command file.
 * Turn: the catalog text the extensions part is built from
 * (skill_session_catalog_text) for N = 300, median over T calls — the
 * tool-set port asks for it at every turn boundary.
 *
 * Figures only: nothing here asserts a time (DESIGN §7). Single-threaded.
 *
 * usage: bench_ext [RUNS (21)] [TURN_CALLS (2000)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/str.h"
#include "ext/commands/commands.h"
#include "ext/skills/skills.h"
#include "ext/sources.h"
#include "loom.h"

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* A workspace with n skills and n/3 commands under root/wN. */
static void make_workspace(const char *root, int n, char *ws, size_t cap)
{
    snprintf(ws, cap, "%s/w%d", root, n);
    char p[512];
    mkdir(ws, 0700);
    snprintf(p, sizeof p, "%s/.loom", ws);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/.loom/skills", ws);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/.loom/commands", ws);
    mkdir(p, 0700);
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/.loom/skills/skill-%d", ws, i);
        mkdir(p, 0700);
        snprintf(p, sizeof p, "%s/.loom/skills/skill-%d/SKILL.md", ws, i);
        char text[1024];
        snprintf(text, sizeof text,
                 "---\nname: skill-%d\ndescription: Does task number %d when the user asks for "
                 "it, with the usual care about inputs and outputs.\nallowed-tools: Read, "
                 "Bash(make:*)\n---\n# Skill %d\n\nStep one. Step two. Step three.\n",
                 i, i, i);
        put(p, text);
        if (i % 3 == 0) {
            snprintf(p, sizeof p, "%s/.loom/commands/cmd-%d.md", ws, i);
            put(p, "---\ndescription: a command\nargument-hint: [x]\n---\nDo $ARGUMENTS.\n");
        }
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static double median_us(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    return (double)v[n / 2] / 1000.0;
}

static double agent_new_us(const char *ws, int runs)
{
    int64_t *t = calloc((size_t)runs, sizeof *t);
    for (int r = 0; r < runs; r++) {
        loom_status st;
        loom_config *cfg = loom_config_new();
        loom_config_set(cfg, "cwd", ws, &st);
        loom_config_set(cfg, "provider", "replay", &st);
        loom_config_set(cfg, "cassette", "/dev/null", &st);
        loom_config_load_settings(cfg, &st);
        int64_t t0 = now_ns();
        loom_agent *a = loom_agent_new(cfg, &st);
        t[r] = now_ns() - t0;
        if (!a) {
            fprintf(stderr, "bench_ext: loom_agent_new: %s\n", st.message);
            exit(1);
        }
        loom_agent_free(a);
        loom_config_free(cfg);
    }
    double m = median_us(t, runs);
    free(t);
    return m;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 21;
    int calls = argc > 2 ? atoi(argv[2]) : 2000;
    if (runs < 1 || calls < 1)
        return 2;
    char root[] = "/tmp/loom-bench-ext-XXXXXX";
    if (!mkdtemp(root))
        return 1;
    char home[300];
    snprintf(home, sizeof home, "%s/home", root);
    mkdir(home, 0700);
    setenv("LOOM_HOME", home, 1);
    setenv("HOME", home, 1);
    setenv("LOOM_TRUST_WORKSPACE", "1", 1);
    static const int sizes[] = {0, 30, 300};
    double base = 0;
    printf("extensions: loom_agent_new with N skills and N/3 commands (median of %d)\n", runs);
    char ws300[400] = "";
    for (size_t i = 0; i < 3; i++) {
        char ws[400];
        make_workspace(root, sizes[i], ws, sizeof ws);
        if (sizes[i] == 300)
            snprintf(ws300, sizeof ws300, "%s", ws);
        double us = agent_new_us(ws, runs);
        if (i == 0)
            base = us;
        printf("  N=%-4d %9.1f us   x%.2f of N=0\n", sizes[i], us, base > 0 ? us / base : 0);
    }

    ext_source_opts o = {.cwd = ws300, .home = home, .user_home = home, .trusted = true,
                         .claude_compat = true};
    loom_error err;
    skill_catalog *sk = skill_catalog_load(&o, &err);
    command_catalog *cm = command_catalog_load(&o, &err);
    skill_session_opts so = {.skills = sk, .commands = cm, .window_tokens = 200000};
    skill_session *ss = skill_session_new(&so);
    int64_t *t = calloc((size_t)calls, sizeof *t);
    size_t offered = 0;
    int64_t tokens = 0;
    for (int i = 0; i < calls; i++) {
        loom_str out = LOOM_STR_INIT;
        int64_t t0 = now_ns();
        skill_session_catalog_text(ss, &out, &tokens, &offered);
        t[i] = now_ns() - t0;
        str_free(&out);
    }
    printf("turn: the skill catalog text for N=300 (%zu listed, %lld tokens): %.1f us median of "
           "%d\n",
           offered, (long long)tokens, median_us(t, calls), calls);
    free(t);
    skill_session_free(ss);
    command_catalog_free(cm);
    skill_catalog_free(sk);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : 1;
}
