/* fuzz_mf_state.c — the renew snapshot (M_f) loader, working_load
 * (context/working.h). The snapshot files sit in the session directory, so
 * they are outside input: a crash may have torn them, a person may have
 * edited them.
 *
 * The input is split on NUL bytes (which valid JSON never holds) into up
 * to four parts, written in order to working_state.json, plan_state.json,
 * event_state.json and knowledge_state.json; an empty part leaves its file
 * out. Then working_new + working_load + working_render. When the load
 * succeeds, what working_save writes of the result must load again into a
 * fresh working memory. Errors are fine; a crash, a leak or a snapshot
 * that cannot be reloaded is not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "context/mf_state.h"
#include "context/working.h"
#include "context/working_render.h"
#include "context/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[4] = {"working_state.json", "plan_state.json",
                                     "event_state.json", "knowledge_state.json"};

static char dir_in[64], dir_out[64];

static void clear_dir(const char *dir)
{
    char path[128];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        unlink(path);
    }
}

static void cleanup(void)
{
    clear_dir(dir_in);
    clear_dir(dir_out);
    rmdir(dir_in);
    rmdir(dir_out);
}

/* One pair of directories per process, made on the first input. */
static int setup(void)
{
    if (dir_in[0])
        return 0;
    strcpy(dir_in, "/tmp/loom-fuzz-mf-in.XXXXXX");
    strcpy(dir_out, "/tmp/loom-fuzz-mf-out.XXXXXX");
    if (!mkdtemp(dir_in) || !mkdtemp(dir_out)) {
        perror("mkdtemp");
        abort();
    }
    atexit(cleanup);
    return 0;
}

static void write_part(const char *dir, int i, const uint8_t *p, size_t n)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        abort();
    }
    if (n && fwrite(p, 1, n, f) != n)
        abort();
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    setup();
    clear_dir(dir_in);
    clear_dir(dir_out);
    size_t start = 0;
    for (int i = 0; i < 4 && start <= size; i++) {
        const uint8_t *nul = start < size ? memchr(data + start, 0, size - start) : NULL;
        size_t end = nul ? (size_t)(nul - data) : size;
        if (end > start)
            write_part(dir_in, i, data + start, end - start);
        start = end + 1;
    }

    todo_list *plan = todo_list_new();
    working *w = working_new(plan);
    loom_error err;
    loom_error_clear(&err);
    int rc = working_load(w, dir_in, &err);
    free(working_render(w));
    size_t n;
    surface_event *evs = working_events(w, &n);
    working_events_free(evs, n);

    if (rc == 0) {
        loom_error_clear(&err);
        if (working_save(w, dir_out, &err) != 0) {
            fprintf(stderr, "working_save: %s\n", err.message);
            abort();
        }
        todo_list *plan2 = todo_list_new();
        working *w2 = working_new(plan2);
        loom_error_clear(&err);
        if (working_load(w2, dir_out, &err) != 0) {
            fprintf(stderr, "a saved snapshot does not load again: %s\n", err.message);
            abort();
        }
        free(working_render(w2));
        working_free(w2);
        todo_list_free(plan2);
    }
    working_free(w);
    todo_list_free(plan);
    return 0;
}
