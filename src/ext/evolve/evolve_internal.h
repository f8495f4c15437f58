/* evolve_internal.h — what the files of ext/evolve/ share: the M_f entry
 * (entry.c), a run's steps (steps.c), the ledgers and paths (ledger.c),
 * the proposals (proposals.c) and constraints (constraints.c). Not for
 * other modules: evolve.h is the face. No state; any thread. */
#ifndef LOOM_EXT_EVOLVE_INTERNAL_H
#define LOOM_EXT_EVOLVE_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "ext/evolve/evolve.h"

/* ---- entry.c: one pattern or failure file ---------------------------------
 * YAML frontmatter, then a markdown body:
 *   name         short title
 *   description  one line: the words recall matches on
 *   kind         pattern | failure
 *   signature    the normalized steps / root cause (entry identity)
 *   seen         integer, 1..MF_SEEN_MAX
 *   sessions     list of session ids (each once, the newest MF_SESSIONS_KEEP)
 *   first_seen, last_seen   ISO-8601 UTC
 * Strings are written double-quoted (JSON escapes, which YAML reads). */
#define MF_ENTRY_MAX_BYTES (64 * 1024)
#define MF_EVIDENCE_KEEP 20   /* evidence lines kept in a body, newest last */
#define MF_SEEN_MAX 1000000000 /* a larger seen does not parse (the file is replaced) */
#define MF_SESSIONS_KEEP 200  /* session ids kept in an entry, newest last */

typedef struct mf_entry {
    char *name;
    char *description;
    char *kind;
    char *signature;
    long long seen;
    char **sessions;          /* NULL-terminated */
    char *first_seen;
    char *last_seen;
    char *body;               /* after the frontmatter; "" when none */
} mf_entry;

/* Parses text (the file at path, named in errors). 0, or -code with err
 * "PATH: …" naming the field. e is zeroed first; free with mf_entry_free. */
int mf_entry_parse(const char *text, const char *path, mf_entry *e, loom_error *err);
void mf_entry_free(mf_entry *e);
/* The file's text (caller frees). */
char *mf_entry_render(const mf_entry *e);
/* "<words of sig>-<8 hex of its hash>": a file name, the same for the same
 * signature. Caller frees. */
char *mf_slug(const char *signature, size_t max_words_len);

/* What one run adds to an entry. */
typedef struct mf_observation {
    const char *kind;         /* pattern | failure */
    const char *signature;
    const char *name;
    const char *description;
    const char *summary;      /* the body's paragraph above the evidence */
    const char *session_id;
    const char *evidence;     /* one line, without the leading "- " */
} mf_observation;

/* Adds the observation to <dir>/<slug>.md (dir: mf/patterns or
 * mf/failures), creating it or counting one more: seen+1, the session
 * added once, last_seen now, the evidence line appended (the last
 * MF_EVIDENCE_KEEP kept). A file of the same slug with another signature
 * (a hash collision) gets "-2", "-3"… Fills *out (may be NULL) with the
 * entry as written and *path_out (may be NULL; caller frees). */
int mf_entry_observe(const char *dir, const mf_observation *o, mf_entry *out, char **path_out,
                     loom_error *err);

/* Every entry of dir (*.md), sorted by file name: [{path, entry fields…}]
 * (caller decrefs). Files that do not parse are skipped with their error
 * appended to warnings (may be NULL). */
json_t *mf_entry_list(const char *dir, json_t *warnings);

/* ---- steps.c: a run's records as normalized steps ----------------------- */
typedef struct evolve_step {
    char *key;                /* "Bash(make deploy)", "Edit(*.c)", "Skill(x)", "Grep" */
    char *tool;
    char *input;              /* the arguments, cut to 200 bytes */
    char *error_class;        /* NULL: succeeded; "exit 2", "not-found", … */
    char *output;             /* the result's first line, cut (failures only) */
    bool denied;              /* refused by permissions: governance, not a failure */
    int turn;                 /* 1-based model reply the call came in */
} evolve_step;

typedef struct evolve_trace {
    evolve_step *steps;
    size_t n;
    int unresolved;           /* index of the failed step never redone, -1: none */
    char *text;               /* the assistant's text of the run, joined */
} evolve_trace;

void evolve_trace_build(const json_t *records, evolve_trace *t);
void evolve_trace_free(evolve_trace *t);
/* The key of one call: tool name and its normalized key input. */
char *evolve_step_key(const char *tool, const json_t *input);
/* The error class of a failed result's output ("exit 2", "not-found",
 * "no-such-file", "timeout", "permission", "error"). */
void evolve_error_class(const char *output, char *buf, size_t cap);
/* " > "-joined keys of what worked: consecutive repeats collapsed, denied
 * and failed steps left out.
 * Caller frees; "" when no step. */
char *evolve_trace_signature(const evolve_trace *t);

/* ---- ledger.c: paths, the lock, the JSONL ledgers ------------------------ */
/* <root>/<rel> (caller frees). */
char *evolve_path(const char *root, const char *rel);
/* flock of mf/.lock (made when missing); -1 when it cannot be had (the
 * caller goes on unlocked: losing one count beats losing the run). */
int evolve_lock(const char *root);
void evolve_unlock(int fd);
/* Appends obj (ts added when absent) to <root>/<rel>. */
int evolve_ledger_append(const char *root, const char *rel, json_t *obj, loom_error *err);
/* Every JSON object line of <root>/<rel>, in order (caller decrefs; []
 * when the file is absent). Lines that are not objects are skipped and
 * counted in *bad (may be NULL). At most 8 MiB are read: of a larger
 * ledger, its newest 8 MiB (from the first whole line). */
json_t *evolve_ledger_read(const char *root, const char *rel, size_t *bad);
/* Whether <root>/.loom, its mf/ (patterns, failures) and the proposed/
 * folders of skills, agents and constraints, when they exist, resolve
 * inside root: a repository whose .loom (or one of these) is a symlink to
 * elsewhere gets nothing written through it. */
bool evolve_root_contained(const char *root);
/* Whether path, or the nearest folder above it that exists, resolves
 * (symlinks followed) inside root. */
bool evolve_path_inside(const char *root, const char *path);
/* Now as ISO-8601 UTC with milliseconds. */
void evolve_now(char out[32]);
/* Lowercase words of text (letters, digits, '_', '-', '.'; >= 3 bytes),
 * deduplicated, common English words left out. */
json_t *evolve_words(const char *text);

/* ---- proposals.c ----------------------------------------------------------- */
/* Whether the review ledger has decided kind/name already (accepted or
 * rejected): such a proposal is never made again. */
bool evolve_decided(const char *root, const char *kind, const char *name);
/* Writes a new proposal of kind ("skill", "constraint", "agent") unless
 * it was decided, is waiting already, or the accepted one exists: 0 with
 * *id ("kind/name", caller frees) when written, 0 with *id NULL when not. */
int evolve_write_proposal(const char *root, const char *kind, const char *name, const char *text,
                          char **id, loom_error *err);
/* E2: a skill from a pattern entry. *id set (caller frees) when written. */
int evolve_propose_skill(const char *root, const mf_entry *pattern, char **id, loom_error *err);
/* E4: an agent file for a task class stopped early `stops` times. */
int evolve_propose_agent(const char *root, const char *task_class, const json_t *runs,
                         char **id, loom_error *err);

/* ---- constraints.c ------------------------------------------------------- */
/* E3: a constraint from a failure entry. */
int evolve_propose_constraint(const char *root, const mf_entry *failure, char **id,
                              loom_error *err);
/* Accepts the proposal file at path: the rule into <root>/.loom/settings.json
 * (or the line into AGENTS.md), the ledger entry into mf/constraints.json.
 * Returns {constraint, rule|line, behavior}. */
json_t *evolve_constraint_accept(const char *root, const char *path, loom_error *err);
/* Checks a constraint proposal's text. 0 or -code naming path. */
int evolve_constraint_check(const char *path, const char *text, loom_error *err);
/* The run's hits of accepted constraints, and the calls that went through
 * an accepted constraint's action after it had fired (overrides), appended
 * to mf/constraint_hits.jsonl. Returns the number of hits. */
int evolve_constraint_hits(const char *root, const evolve_run *run, const evolve_trace *t);
/* The accepted constraints (mf/constraints.json), [] when none. */
json_t *evolve_constraints_read(const char *root);

/* The task class of a goal: its first two content words, "-"-joined
 * ("migrate-schema"); "" when it has none. Caller frees. */
char *evolve_task_class(const char *goal);

#endif
