/* distill.c — E1 after each run (seed 000 row 5.7a), and the thresholds
 * that turn what it wrote into proposals (E2 5.7b, E3 5.7c, E4 5.7d).
 *
 * The decision is deterministic, from the run's records alone:
 *   failure  a tool failed (not a permission refusal) and the same step
 *            never succeeded later in the run: root cause = the step's key
 *            and its error class, revealed by that step;
 *   pattern  the run completed at end_turn with no such failure and at
 *            least one step that worked: the signature is the steps' keys;
 *   none     otherwise (nothing ran, or it stopped early with no failed
 *            tool: E4 still counts the early stop).
 * Every run is a line of mf/runs.jsonl, which E4 and the audit read.
 * No state; any thread; the M_f lock is held for the whole of one run's
 * distillation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "ext/evolve/evolve_internal.h"

static void warn(json_t *warnings, const char *msg)
{
    if (warnings)
        json_array_append_new(warnings, json_string(msg));
}

void evolve_config_read(const json_t *const *docs, int n, evolve_config *out, json_t *warnings)
{
    *out = (evolve_config){false, EVOLVE_THRESHOLD_DEFAULT, EVOLVE_RETIRE_AFTER_DEFAULT};
    for (int i = 0; i < n; i++) {
        const json_t *b = docs[i] ? json_object_get(docs[i], "evolve") : NULL;
        if (!b)
            continue;
        if (!json_is_object(b)) {
            warn(warnings, "settings: evolve must be an object; ignored");
            continue;
        }
        const json_t *v;
        if ((v = json_object_get(b, "enabled")))
            json_is_boolean(v) ? (void)(out->enabled = json_is_true(v))
                               : warn(warnings, "settings: evolve.enabled must be true or false");
        if ((v = json_object_get(b, "threshold"))) {
            if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= 1000)
                out->threshold = (int)json_integer_value(v);
            else
                warn(warnings, "settings: evolve.threshold must be an integer from 1 to 1000");
        }
        if ((v = json_object_get(b, "retireAfterSessions"))) {
            if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= 100000)
                out->retire_after = (int)json_integer_value(v);
            else
                warn(warnings,
                     "settings: evolve.retireAfterSessions must be an integer from 1 to 100000");
        }
    }
    const char *env = getenv("LOOM_EVOLVE");
    if (env && !strcmp(env, "1"))
        out->enabled = true;
    else if (env && !strcmp(env, "0"))
        out->enabled = false;
}

static bool early_stop(const char *stop)
{
    static const char *const early[] = {"max_turns", "token_budget", "usd_budget",
                                        "budget_share", "max_tokens", NULL};
    for (size_t i = 0; stop && early[i]; i++)
        if (!strcmp(stop, early[i]))
            return true;
    return false;
}

static char *goal_line(const char *goal)
{
    size_t n = strcspn(goal ? goal : "", "\n");
    if (n > 100)
        n = 100;
    while (n && ((unsigned char)goal[n] & 0xC0) == 0x80)
        n--; /* never cut inside a character */
    return xstrndup(goal ? goal : "", n);
}

static json_t *observe_failure(const char *root, const evolve_run *run, const evolve_trace *t,
                               mf_entry *e, loom_error *err)
{
    const evolve_step *s = &t->steps[t->unresolved];
    char *goal = goal_line(run->goal);
    loom_str sig = {0}, name = {0}, desc = {0}, sum = {0}, ev = {0};
    str_printf(&sig, "%s -> %s", s->key, s->error_class);
    str_printf(&name, "%s fails: %s", s->key, s->error_class);
    str_printf(&desc, "Failure: %s ends in %s (%s) while working on: %s", s->key, s->error_class,
               s->output ? s->output : "", goal);
    str_printf(&sum,
               "Root cause: `%s` fails with %s: %s\n\nRevealed by step %d of %zu (turn %d), "
               "input `%s`; the run ended with it unresolved.",
               s->key, s->error_class, s->output ? s->output : "", t->unresolved + 1, t->n,
               s->turn, s->input);
    str_printf(&ev, "session %s, run %s, turns %d, revealing step %d (turn %d): %s",
               run->session_id, run->run_id, run->turns, t->unresolved + 1, s->turn, s->input);
    mf_observation o = {"failure", str_cstr(&sig), str_cstr(&name), str_cstr(&desc),
                        str_cstr(&sum), run->session_id, str_cstr(&ev)};
    char *dir = evolve_path(root, ".loom/mf/failures");
    char *path = NULL;
    json_t *out = NULL;
    if (mf_entry_observe(dir, &o, e, &path, err) == 0)
        out = json_pack("{s:s,s:s,s:I}", "kind", "failure", "entry", path, "seen",
                        (json_int_t)e->seen);
    free(path);
    free(dir);
    free(goal);
    str_free(&sig);
    str_free(&name);
    str_free(&desc);
    str_free(&sum);
    str_free(&ev);
    return out;
}

static json_t *observe_pattern(const char *root, const evolve_run *run, const evolve_trace *t,
                               const char *sig, mf_entry *e, loom_error *err)
{
    char *goal = goal_line(run->goal);
    loom_str name = {0}, desc = {0}, sum = {0}, ev = {0}, tools = {0};
    str_printf(&name, "Steps: %.110s%s", sig, strlen(sig) > 110 ? "…" : "");
    str_printf(&desc, "Worked for: %s — steps %s", goal, sig);
    str_puts(&sum, "The run succeeded with these steps, in order:\n");
    int k = 0;
    const char *prev = NULL;
    json_t *seen_tools = json_object();
    for (size_t i = 0; i < t->n; i++) {
        const evolve_step *s = &t->steps[i];
        if (s->denied || s->error_class || (prev && !strcmp(prev, s->key)))
            continue;
        str_printf(&sum, "\n%d. `%s`", ++k, s->key);
        prev = s->key;
        if (!json_object_get(seen_tools, s->tool)) {
            json_object_set_new(seen_tools, s->tool, json_true());
            str_printf(&tools, "%s%s", tools.len ? ", " : "", s->tool);
        }
    }
    json_decref(seen_tools);
    str_printf(&ev, "session %s, run %s, turns %d, tools: %s", run->session_id, run->run_id,
               run->turns, str_cstr(&tools));
    mf_observation o = {"pattern", sig, str_cstr(&name), str_cstr(&desc), str_cstr(&sum),
                        run->session_id, str_cstr(&ev)};
    char *dir = evolve_path(root, ".loom/mf/patterns");
    char *path = NULL;
    json_t *out = NULL;
    if (mf_entry_observe(dir, &o, e, &path, err) == 0)
        out = json_pack("{s:s,s:s,s:I}", "kind", "pattern", "entry", path, "seen",
                        (json_int_t)e->seen);
    free(path);
    free(dir);
    free(goal);
    str_free(&name);
    str_free(&desc);
    str_free(&sum);
    str_free(&ev);
    str_free(&tools);
    return out;
}

static void add_id(json_t *summary, char *id)
{
    if (!id)
        return;
    json_t *arr = json_object_get(summary, "proposed");
    if (!arr) {
        arr = json_array();
        json_object_set_new(summary, "proposed", arr);
    }
    json_array_append_new(arr, json_string(id));
    free(id);
}

/* E4: the runs of this class that stopped early, this one included. */
static void maybe_agent(const evolve_config *cfg, const char *root, const char *cls,
                        json_t *summary)
{
    json_t *runs = evolve_ledger_read(root, ".loom/mf/runs.jsonl", NULL);
    json_t *early = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(runs, i, r) {
        if (!strcmp(json_get_str(r, "class", ""), cls) && json_get_bool(r, "early", false))
            json_array_append(early, r);
    }
    json_decref(runs);
    if ((int)json_array_size(early) >= cfg->threshold) {
        char *id = NULL;
        loom_error err;
        if (evolve_propose_agent(root, cls, early, &id, &err) == 0)
            add_id(summary, id);
    }
    json_decref(early);
}

json_t *evolve_after_run(const evolve_config *cfg, const evolve_run *run, loom_error *err)
{
    if (!evolve_root_contained(run->root)) {
        loom_error_set(err, LOOM_ERR_PROJECT_SCOPE_DENIED,
                       "%s/.loom leads outside the project: nothing distilled", run->root);
        return NULL;
    }
    int lock = evolve_lock(run->root);
    evolve_trace t;
    evolve_trace_build(run->records, &t);
    int hits = evolve_constraint_hits(run->root, run, &t);
    char *sig = evolve_trace_signature(&t);
    bool completed = run->state && !strcmp(run->state, "completed") && run->stop_reason &&
                     !strcmp(run->stop_reason, "end_turn");
    mf_entry e;
    memset(&e, 0, sizeof e);
    json_t *summary = NULL;
    bool failed = t.unresolved >= 0;
    if (failed)
        summary = observe_failure(run->root, run, &t, &e, err);
    else if (completed && *sig)
        summary = observe_pattern(run->root, run, &t, sig, &e, err);
    else
        summary = json_pack("{s:s}", "kind", "none");
    if (summary && e.kind && e.seen >= cfg->threshold) {
        char *id = NULL;
        loom_error perr;
        if (failed ? evolve_propose_constraint(run->root, &e, &id, &perr) == 0
                   : evolve_propose_skill(run->root, &e, &id, &perr) == 0)
            add_id(summary, id);
    }
    mf_entry_free(&e);
    char *cls = evolve_task_class(run->goal);
    bool early = early_stop(run->stop_reason);
    json_t *line = json_pack("{s:s,s:s,s:s,s:s,s:s,s:i,s:b,s:s}", "session", run->session_id,
                             "run", run->run_id, "class", cls, "state",
                             run->state ? run->state : "", "stop_reason",
                             run->stop_reason ? run->stop_reason : "", "turns", run->turns,
                             "early", early, "outcome",
                             summary ? json_get_str(summary, "kind", "none") : "none");
    loom_error lerr;
    if (line)
        evolve_ledger_append(run->root, ".loom/mf/runs.jsonl", line, &lerr);
    json_decref(line);
    if (summary && early && *cls)
        maybe_agent(cfg, run->root, cls, summary);
    if (summary && hits)
        json_object_set_new(summary, "hits", json_integer(hits));
    if (summary)
        json_object_set_new(summary, "metrics",
                            evolve_run_metrics(run->root, run->run_id, run->records));
    free(cls);
    free(sig);
    evolve_trace_free(&t);
    evolve_unlock(lock);
    return summary;
}
