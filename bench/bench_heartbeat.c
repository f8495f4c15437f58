/* bench_heartbeat.c — what the heartbeat costs while nothing changes: the
 * thread's own CPU time over its wall time, watching a source tree with a
 * filesystem source (inotify + hashes), a resource source and external
 * signals, at several tick intervals. The baseline in the same run is the
 * start-up hashing of the tree, reported separately.
 *
 * usage: bench_heartbeat [DIR] [SECONDS]   (defaults: src, 3 s per interval) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/clock.h"
#include "context/working.h"
#include "heartbeat/heartbeat.h"
#include "context/plan.h"

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "src";
    double secs = argc > 2 ? atof(argv[2]) : 3.0;
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return 1;
    const double intervals[] = {5.0, 1.0, 0.1};
    for (size_t i = 0; i < sizeof intervals / sizeof intervals[0]; i++) {
        json_t *block = json_pack("{s:f,s:f,s:[{s:s,s:[s]},{s:s,s:i},{s:s}]}", "T_hb",
                                  intervals[i], "T_hb_act", intervals[i], "watch_sources",
                                  "type", "filesystem", "paths", dir, "type", "resource",
                                  "memory_pct", 99, "type", "external_signal");
        heartbeat_config cfg;
        loom_error err;
        if (heartbeat_config_from_json(block, cwd, &cfg, &err) != 0) {
            fprintf(stderr, "bench_heartbeat: %s\n", err.message);
            return 1;
        }
        json_decref(block);
        todo_list *plan = todo_list_new();
        working *w = working_new(plan);
        heartbeat_env env = {.w = w, .cwd = cwd};
        int64_t t0 = clock_mono_ns();
        heartbeat *hb = heartbeat_start(&cfg, &env, &err);
        int64_t t1 = clock_mono_ns();
        heartbeat_config_free(&cfg);
        if (!hb) {
            fprintf(stderr, "bench_heartbeat: %s\n", err.message);
            return 1;
        }
        heartbeat_stats start;
        heartbeat_get_stats(hb, &start);
        /* At least two ticks at every interval. */
        double span = secs > 2.2 * intervals[i] ? secs : 2.2 * intervals[i];
        struct timespec ts = {(time_t)span, (long)((span - (double)(time_t)span) * 1e9)};
        nanosleep(&ts, NULL);
        heartbeat_stats st;
        heartbeat_stop(hb, &st);
        double idle_cpu = (double)(st.cpu_ns - start.cpu_ns);
        double idle_wall = (double)(st.wall_ns - start.wall_ns);
        uint64_t ticks = st.ticks - start.ticks;
        printf("heartbeat T_hb %.1f s watching %s/ for %.1f s: start-up (baseline hashes) "
               "%.1f ms; %llu idle ticks at %.3f ms CPU each; thread CPU share %.4f%% "
               "(target < 1%%); %llu events\n",
               intervals[i], dir, span, (double)(t1 - t0) / 1e6, (unsigned long long)ticks,
               ticks ? idle_cpu / 1e6 / (double)ticks : 0.0,
               idle_wall > 0 ? 100.0 * idle_cpu / idle_wall : 0.0,
               (unsigned long long)st.emitted);
        working_free(w);
        todo_list_free(plan);
    }
    return 0;
}
