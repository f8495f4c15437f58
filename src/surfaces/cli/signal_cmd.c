/* signal_cmd.c — `loom signal SESSION [NAME]`.
 *
 * A run with a heartbeat writes its process id to <session>.mf/run.pid
 * (docs/heartbeat.md); this command finds that file for the session id (or
 * a unique prefix) under $LOOM_HOME/projects and sends the process the
 * signal, which the running loom hands to its heartbeat as an
 * external_signal event. NAME: USR1 (default; a high-urgency event the
 * model sees), USR2, HUP, INT or TERM (critical: the run stops, resumable). */
#include "surfaces/cli/signal_cmd.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"

static int signal_number(const char *name)
{
    if (!strncasecmp(name, "SIG", 3))
        name += 3;
    static const struct {
        const char *name;
        int signo;
    } known[] = {{"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP},
                 {"INT", SIGINT},   {"TERM", SIGTERM}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcasecmp(name, known[i].name))
            return known[i].signo;
    return -1;
}

/* The run.pid of the session whose id starts with prefix; -1 when none,
 * -2 when the prefix names several sessions. */
static long find_pid(const char *projects, const char *prefix, loom_str *found)
{
    DIR *d = opendir(projects);
    if (!d)
        return -1;
    long pid = -1;
    int matches = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char *dir = path_join(projects, e->d_name);
        DIR *p = opendir(dir);
        struct dirent *f;
        while (p && (f = readdir(p))) {
            size_t len = strlen(f->d_name);
            if (len < 4 || strcmp(f->d_name + len - 3, ".mf") != 0 ||
                strncmp(f->d_name, prefix, strlen(prefix)) != 0)
                continue;
            char *mf = path_join(dir, f->d_name);
            char *path = path_join(mf, "run.pid");
            free(mf);
            FILE *pf = fopen(path, "r");
            long v = 0;
            if (pf && fscanf(pf, "%ld", &v) == 1 && v > 0) {
                matches++;
                pid = v;
                str_clear(found);
                str_append(found, f->d_name, len - 3);
            }
            if (pf)
                fclose(pf);
            free(path);
        }
        if (p)
            closedir(p);
        free(dir);
    }
    closedir(d);
    return matches > 1 ? -2 : pid;
}

int signal_cmd_main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || !strcmp(argv[1], "--help")) {
        fprintf(stderr, "usage: loom signal SESSION [USR1|USR2|HUP|INT|TERM]\n"
                        "  hands a signal to the heartbeat of the run working on SESSION\n");
        return 2;
    }
    const char *name = argc == 3 ? argv[2] : "USR1";
    int signo = signal_number(name);
    if (signo < 0) {
        fprintf(stderr, "loom signal: unknown signal %s (USR1, USR2, HUP, INT or TERM)\n", name);
        return 2;
    }
    char *home = loom_home();
    loom_str projects = LOOM_STR_INIT;
    str_printf(&projects, "%s/projects", home);
    free(home);
    loom_str session = LOOM_STR_INIT;
    long pid = find_pid(projects.ptr, argv[1], &session);
    str_free(&projects);
    int rc = 0;
    if (pid == -2) {
        fprintf(stderr, "loom signal: %s names more than one running session; give more of "
                        "the id\n", argv[1]);
        rc = 1;
    } else if (pid < 0) {
        fprintf(stderr, "loom signal: no run with a heartbeat is working on session %s\n",
                argv[1]);
        rc = 1;
    } else if (kill((pid_t)pid, signo) != 0) {
        fprintf(stderr, "loom signal: process %ld (session %s): %s\n", pid, session.ptr,
                strerror(errno));
        rc = 1;
    } else {
        printf("sent SIG%s to process %ld (session %s)\n",
               !strncasecmp(name, "SIG", 3) ? name + 3 : name, pid, session.ptr);
    }
    str_free(&session);
    return rc;
}
