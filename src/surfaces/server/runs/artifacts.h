/* artifacts.h — what a run leaves behind (seed 000 §10.5: "the most
 * important stable output interface"), built once when the run ends:
 *   patch.diff     kind patch   text/x-diff       the run's file changes (loom_run_patch), when any
 *   conclusion.md  kind text    text/markdown     the final answer
 *   result.json    kind json    application/json  loom's result object
 *   report.md      kind report  text/markdown     what was done: tools run, approvals, files, usage
 *   summary.json   kind summary application/json  the run summary (state, times, counts, usage)
 * in that order, at most max_artifacts (the tenant's quota; what is cut is
 * named in a warning the caller emits). Pure: no I/O, any thread. */
#ifndef LOOM_SERVER_ARTIFACTS_H
#define LOOM_SERVER_ARTIFACTS_H

#include <stddef.h>

typedef struct artifact_input {
    const char *run_id;
    const char *run_json;     /* the Run object at its end */
    const char *result_json;  /* loom_run_result_json, may be NULL */
    const char *patch;        /* loom_run_patch, may be NULL or "" */
    const char *events_json;  /* a JSON array of the run's events (for the report), may be NULL */
    int max_artifacts;        /* ≥ 0 */
} artifact_input;

typedef struct artifact_item {
    char *name;               /* "patch.diff" */
    char *kind;               /* "patch" */
    char *title;              /* "Patch: 2 files changed, +5 -1" */
    char *content_type;       /* "text/x-diff" */
    char *data;               /* the content (NUL-terminated too) */
    size_t len;
} artifact_item;

typedef struct artifact_list {
    artifact_item *items;
    size_t n;
    size_t dropped;           /* left out by max_artifacts */
} artifact_list;

/* Fills out (zeroed first). 0, or -1 when out of memory. */
int artifacts_build(const artifact_input *in, artifact_list *out);
void artifact_list_free(artifact_list *l);

#endif
