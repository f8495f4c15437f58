/* evolve.h — self-evolution E1–E4 (seed 000 rows 5.7–5.7d, milestone M4):
 * what the API calls at a run's start and end, and what `loom evolve`
 * reads. docs/evolve.md is the manual.
 *
 *   E1  after each run, the run's steps distilled into M_f: a pattern (the
 *       run succeeded) or a failure (root cause + the step that revealed
 *       it), one file per signature under <root>/.loom/mf/{patterns,failures}/,
 *       which the memory recall (ext/memory/) brings into later runs
 *   E2  a pattern seen >= threshold times: a proposed skill under
 *       <root>/.loom/skills/proposed/<name>/SKILL.md (never loaded)
 *   E3  a failure seen >= threshold times: a proposed constraint under
 *       <root>/.loom/constraints/proposed/<name>.md; accepted, it is a
 *       permissions rule in <root>/.loom/settings.json and every firing is
 *       a line of <root>/.loom/mf/constraint_hits.jsonl; the audit proposes
 *       retiring the ones that never fire or that the user overrode
 *   E4  a task class stopped early >= threshold times: a proposed agent
 *       file under <root>/.loom/agents/proposed/<name>.md
 *
 * Everything here is deterministic (no model call decides anything) and
 * works on files only: each call reads and writes what it needs, under an
 * flock of <root>/.loom/mf/.lock so two loom processes finishing runs at
 * once do not lose an update. No state between calls; any thread. */
#ifndef LOOM_EXT_EVOLVE_H
#define LOOM_EXT_EVOLVE_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/* The "evolve" settings block ({"enabled", "threshold",
 * "retireAfterSessions"}); LOOM_EVOLVE=1 / 0 in the environment
 * wins over "enabled". Off by default: distillation writes into the
 * project's own folder, which a user asks for rather than finds. */
typedef struct evolve_config {
    bool enabled;
    int threshold;       /* θ of E2, E3 and E4: seed 000 leaves it open; 3 */
    int retire_after;    /* the audit's N: sessions without a firing; 20 */
} evolve_config;

#define EVOLVE_THRESHOLD_DEFAULT 3
#define EVOLVE_RETIRE_AFTER_DEFAULT 20

/* Reads the block from the settings documents docs[0..n) (user, project,
 * local; NULL entries skipped; a later one's key wins). Bad values are
 * ignored with a warning string appended to warnings (may be NULL). */
void evolve_config_read(const json_t *const *docs, int n, evolve_config *out, json_t *warnings);

/* Where M_f lives for a working directory: its repository root, else the
 * directory itself. Caller frees. */
char *evolve_root(const char *cwd);

/* One finished run, as the API saw it. records is the JSON array of the
 * session records the run wrote (docs/session-format.md), in order. */
typedef struct evolve_run {
    const char *root;
    const char *session_id;
    const char *run_id;
    const char *goal;
    const json_t *records;
    const char *state;        /* loom_run_state_name */
    const char *stop_reason;  /* loom_stop_reason_name */
    int turns;
} evolve_run;

/* E1–E4 for one run: records the run (mf/runs.jsonl), writes or updates its
 * pattern or failure entry, records constraint hits and overrides, and
 * writes the proposals a threshold reached. Returns a summary object
 * (caller decrefs): {"kind": "pattern"|"failure"|"none", "entry"?: path,
 * "seen"?, "proposed"?: [ids], "hits"?: n}; NULL with err on an I/O error. */
json_t *evolve_after_run(const evolve_config *cfg, const evolve_run *run, loom_error *err);

/* The JSON object lines of a JSONL text (a ledger, or a session file's
 * tail), in order (caller decrefs). Lines that are not objects are skipped
 * and counted in *bad (may be NULL). Untrusted input: never fails. */
json_t *evolve_jsonl_parse(const char *text, size_t len, size_t *bad);

/* `loom evolve review`: the proposals waiting, [{id, kind, name,
 * description, path, seen}] (caller decrefs). */
json_t *evolve_review_list(const char *root, loom_error *err);
/* One proposal: {id, kind, name, path, text}; NULL with err (not found,
 * ambiguous). id is "skill/<name>", "constraint/<name>", "agent/<name>"
 * or a bare name when only one kind has it. */
json_t *evolve_review_show(const char *root, const char *id, loom_error *err);
/* Accepts (the skill moved to .loom/skills/<name>/, the constraint written
 * to the project settings with an id, the agent moved to .loom/agents/)
 * or rejects (the file removed, never proposed again). Both are recorded
 * in mf/review.jsonl. Returns {id, action, path?, rule?, constraint?}. */
json_t *evolve_review_decide(const char *root, const char *id, bool accept, loom_error *err);
/* After the user edited a proposal's file: it still parses (the skills
 * loader's rules for a skill, an agent file's for an agent, a rule for a
 * constraint). Records an "edit" line. {id, path}; NULL with err naming
 * the file and the problem. */
json_t *evolve_review_edited(const char *root, const char *id, loom_error *err);

/* `loom evolve audit` (constraints.c): each accepted constraint with its
 * age, hits, last blocked task and whether to retire it. */
json_t *evolve_audit(const evolve_config *cfg, const char *root, loom_error *err);

/* The metric set at one run's end, for telemetry: the accepted totals so
 * far, and how many items were recalled into this run (run_id's lines of
 * recall.jsonl) and how many of those the run's records never used (the
 * rule of evolve_stats). {constraints_accepted, skills_accepted,
 * agents_accepted, recalled, recalled_unused}; caller decrefs. */
json_t *evolve_run_metrics(const char *root, const char *run_id, const json_t *records);

/* `loom evolve stats` (stats.c): the M4 metric set. */
json_t *evolve_stats(const char *root, loom_error *err);

#endif
