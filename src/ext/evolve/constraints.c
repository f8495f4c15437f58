/* constraints.c — E3, the constraint ratchet (seed 000 row 5.7c), and the
 * audit that keeps it from atrophying capability.
 *
 * A failure entry seen θ times proposes a constraint: for a Bash root
 * cause a permissions deny rule on its program and subcommand,
 * `Bash(make deploy:*)`; for any other tool (whose key is a file pattern
 * or a bare name, too coarse for a rule) a line for AGENTS.md. Accepting
 * writes the rule into <root>/.loom/settings.json's permissions — where
 * the permission engine reads it, tightening even in an untrusted
 * workspace — and an entry with its id into mf/constraints.json.
 *
 * A firing is seen in the run's records: the pipeline's denial names the
 * matching rule ("denied by settings rule R (…)", or "settings rule R (…)
 * requires approval"), so each one is a hit line of
 * mf/constraint_hits.jsonl. A call of the constrained step that ran after
 * the constraint had fired (the user approved an ask, or loosened the
 * rule) is an override line. The audit reads both. No state; any thread;
 * callers hold the M_f lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/path.h"
#include "base/settings.h"
#include "base/str.h"
#include "ext/evolve/evolve_internal.h"

#define LEDGER ".loom/mf/constraints.json"
#define HITS ".loom/mf/constraint_hits.jsonl"
#define HITS_PER_RUN_MAX 20 /* lines one run writes for one constraint */

/* The rule for a failure's step key, or NULL when it takes an AGENTS.md line. */
static char *rule_for(const char *signature, char **step)
{
    const char *arrow = strstr(signature, " -> ");
    size_t n = arrow ? (size_t)(arrow - signature) : strlen(signature);
    *step = xstrndup(signature, n);
    if (n < 7 || strncmp(signature, "Bash(", 5) != 0 || signature[n - 1] != ')')
        return NULL;
    char *inner = xstrndup(signature + 5, n - 6);
    if (!*inner || strpbrk(inner, "():*\\\"")) {
        free(inner);
        return NULL;
    }
    loom_str s = {0};
    str_printf(&s, "Bash(%s:*)", inner);
    free(inner);
    return str_steal(&s);
}

int evolve_propose_constraint(const char *root, const mf_entry *failure, char **id,
                              loom_error *err)
{
    *id = NULL;
    char *step = NULL;
    char *rule = rule_for(failure->signature, &step);
    char *name = mf_slug(failure->signature, 40);
    loom_str t = {0}, d = {0};
    str_printf(&t, "---\nname: %s\n", name);
    str_printf(&d, "Never again: %s (seen %lld times)", failure->signature, failure->seen);
    str_puts(&t, "description: ");
    json_put_string(&t, str_cstr(&d), d.len);
    str_puts(&t, "\nkind: constraint\n");
    if (rule) {
        str_puts(&t, "behavior: deny\nrule: ");
        json_put_string(&t, rule, strlen(rule));
    } else {
        loom_str line = {0};
        str_printf(&line, "Known failure in this project: %s (seen %lld times). Do not repeat "
                          "it as it was; find the cause first.",
                   failure->signature, failure->seen);
        str_puts(&t, "behavior: agents-md\nline: ");
        json_put_string(&t, str_cstr(&line), line.len);
        str_free(&line);
    }
    str_puts(&t, "\nsignature: ");
    json_put_string(&t, failure->signature, strlen(failure->signature));
    str_puts(&t, "\nstep: ");
    json_put_string(&t, step, strlen(step));
    str_printf(&t, "\nseen: %lld\n---\n\n", failure->seen);
    str_printf(&t, "Proposed by `loom evolve` (E3) from the M_f failure `%s`, seen %lld times "
                   "(sessions:",
               failure->signature, failure->seen);
    for (size_t i = 0; failure->sessions[i] && i < 10; i++)
        str_printf(&t, " %s", failure->sessions[i]);
    str_printf(&t, ").\n\n%s\n", rule ? "Accepting adds the rule to permissions.deny in "
                                        ".loom/settings.json; the call is then refused before it "
                                        "runs, and each refusal is counted (loom evolve audit)."
                                      : "Accepting appends the line to AGENTS.md.");
    int rc = evolve_write_proposal(root, "constraint", name, str_cstr(&t), id, err);
    str_free(&t);
    str_free(&d);
    free(name);
    free(rule);
    free(step);
    return rc;
}

int evolve_constraint_check(const char *path, const char *text, loom_error *err)
{
    json_t *fm = frontmatter_parse(text, NULL, err);
    if (!fm)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, err->message);
    const char *b = json_get_str(fm, "behavior", "");
    const char *rule = json_get_str(fm, "rule", NULL);
    const char *line = json_get_str(fm, "line", NULL);
    int rc = 0;
    if (!strcmp(b, "deny") || !strcmp(b, "ask")) {
        /* The shape the permission engine reads: Tool or Tool(specifier). */
        size_t n = rule ? strlen(rule) : 0;
        const char *open = rule ? strchr(rule, '(') : NULL;
        if (!n || n > 500 || strchr(rule, '\n') || (open && rule[n - 1] != ')') ||
            (!open && strchr(rule, ')')))
            rc = loom_error_set(err, LOOM_ERR_CONFIG,
                                "%s: rule must be a permission rule such as Bash(make deploy:*)",
                                path);
    } else if (!strcmp(b, "agents-md")) {
        if (!line || !*line || strchr(line, '\n') || strlen(line) > 1000)
            rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: line must be one line of text", path);
    } else {
        rc = loom_error_set(err, LOOM_ERR_CONFIG, "%s: behavior must be deny, ask or agents-md",
                            path);
    }
    json_decref(fm);
    return rc;
}

json_t *evolve_constraints_read(const char *root)
{
    char *path = evolve_path(root, LEDGER);
    json_t *doc = NULL;
    loom_str why = {0};
    char *text = file_exists(path) ? file_read_text(path, 4 * 1024 * 1024, FILE_TEXT_NOFOLLOW, &why)
                                   : NULL;
    if (text)
        doc = json_loads(text, 0, NULL);
    free(text);
    str_free(&why);
    free(path);
    json_t *list = json_get_arr(doc, "constraints");
    json_t *out = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c) {
        if (json_is_object(c) && json_get_str(c, "id", NULL))
            json_array_append(out, c);
    }
    json_decref(doc);
    return out;
}

static int write_ledger(const char *root, json_t *list, loom_error *err)
{
    json_t *doc = json_pack("{s:O}", "constraints", list);
    char *text = json_dumps(doc, JSON_INDENT(2));
    json_decref(doc);
    char *path = evolve_path(root, LEDGER);
    int rc = file_write_atomic(path, text, strlen(text), 0644, err);
    free(path);
    free(text);
    return rc;
}

/* The rule still stands in the project settings' list. */
static bool rule_present(const char *root, const char *behavior, const char *rule)
{
    char *path = evolve_path(root, ".loom/settings.json");
    json_t *doc = NULL;
    loom_error err;
    settings_read(path, &doc, &err);
    free(path);
    bool have = false;
    size_t i;
    json_t *v;
    json_array_foreach(json_get_arr(json_get_obj(doc, "permissions"), behavior), i, v) {
        have = have || (json_is_string(v) && !strcmp(json_string_value(v), rule));
    }
    json_decref(doc);
    return have;
}

static bool line_present(const char *root, const char *id)
{
    char *path = evolve_path(root, "AGENTS.md");
    loom_str why = {0};
    char *text = file_read_text(path, 1024 * 1024, 0, &why);
    bool have = text && strstr(text, id);
    free(text);
    str_free(&why);
    free(path);
    return have;
}

/* path exists and is not a regular file (a symlink is not followed). */
static bool is_link_or_odd(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

json_t *evolve_constraint_accept(const char *root, const char *path, loom_error *err)
{
    loom_str why = {0};
    char *text = file_read_text(path, 256 * 1024, FILE_TEXT_NOFOLLOW, &why);
    if (!text) {
        loom_error_set(err, LOOM_ERR_IO, "%s: %s", path, str_cstr(&why));
        str_free(&why);
        return NULL;
    }
    str_free(&why);
    json_t *fm = frontmatter_parse(text, NULL, err);
    free(text);
    if (!fm)
        return NULL;
    const char *behavior = json_get_str(fm, "behavior", "deny");
    const char *rule = json_get_str(fm, "rule", NULL);
    const char *line = json_get_str(fm, "line", NULL);
    const char *what = rule ? rule : line ? line : "";
    char now[32];
    evolve_now(now);
    char id[16];
    snprintf(id, sizeof id, "c-%08x", (unsigned)(hash_fnv1a64(0, what, strlen(what)) & 0xffffffffu));
    int rc = 0;
    if (!strcmp(behavior, "agents-md")) {
        char *md = evolve_path(root, "AGENTS.md");
        loom_str old = {0};
        char *cur = file_exists(md) ? file_read_text(md, 1024 * 1024, FILE_TEXT_NOFOLLOW, &old) : NULL;
        struct stat st;
        if (!cur && lstat(md, &st) == 0) {
            /* There but unreadable (AGENTS.md -> CLAUDE.md is common, or
             * over the cap): writing would replace it, and its text, with
             * one line. */
            rc = loom_error_set(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                                "%s: %s; not changed (add the line by hand)", md, str_cstr(&old));
            str_free(&old);
            free(md);
            json_decref(fm);
            return NULL;
        }
        loom_str s = {0};
        str_puts(&s, cur ? cur : "");
        if (s.len && s.ptr[s.len - 1] != '\n')
            str_putc(&s, '\n');
        str_printf(&s, "- %s (loom evolve constraint %s)\n", line, id);
        rc = file_write_atomic(md, s.ptr, s.len, 0644, err);
        str_free(&s);
        str_free(&old);
        free(cur);
        free(md);
    } else {
        char *sp = evolve_path(root, ".loom/settings.json");
        json_t *doc = NULL;
        /* A repository's settings.json that is a symlink (to the user's
         * ~/.loom/settings.json, say) would have the user's whole settings,
         * keys and all, copied into the project. */
        rc = is_link_or_odd(sp)
                 ? loom_error_set(err, LOOM_ERR_INVALID_STATE_TRANSITION,
                                  "%s is a symlink or not a regular file: not changed (add the "
                                  "rule by hand)",
                                  sp)
                 : settings_read(sp, &doc, err);
        if (rc == 0) {
            json_t *perms = json_deep_copy(json_get_obj(doc, "permissions"));
            if (!perms)
                perms = json_object();
            json_t *list = json_object_get(perms, behavior);
            if (!json_is_array(list)) {
                list = json_array();
                json_object_set_new(perms, behavior, list);
            }
            bool have = false;
            size_t i;
            json_t *v;
            json_array_foreach(list, i, v) {
                have = have || (json_is_string(v) && !strcmp(json_string_value(v), rule));
            }
            if (!have)
                json_array_append_new(list, json_string(rule));
            rc = settings_write_key(sp, "permissions", perms, err);
            json_decref(perms);
        }
        json_decref(doc);
        free(sp);
    }
    json_t *out = NULL;
    if (rc == 0) {
        json_t *list = evolve_constraints_read(root);
        json_t *c = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "id", id, "name",
                              json_get_str(fm, "name", ""), "behavior", behavior, "signature",
                              json_get_str(fm, "signature", ""), "step",
                              json_get_str(fm, "step", ""), "accepted_at", now);
        json_object_set_new(c, rule ? "rule" : "line", json_string(what));
        json_array_append(list, c);
        rc = write_ledger(root, list, err);
        json_decref(list);
        if (rc == 0)
            out = json_pack("{s:s,s:s,s:s}", "constraint", id, "behavior", behavior,
                            rule ? "rule" : "line", what);
        json_decref(c);
    }
    json_decref(fm);
    return out;
}

static bool names_rule(const char *output, const char *rule)
{
    if (!output || !rule || !*rule)
        return false;
    loom_str s = {0};
    str_printf(&s, "settings rule %s (", rule);
    bool hit = strstr(output, str_cstr(&s)) != NULL;
    str_free(&s);
    return hit;
}

int evolve_constraint_hits(const char *root, const evolve_run *run, const evolve_trace *t)
{
    json_t *cs = evolve_constraints_read(root);
    if (!json_array_size(cs)) {
        json_decref(cs);
        return 0;
    }
    json_t *old = evolve_ledger_read(root, HITS, NULL);
    int hits = 0;
    char goal[124];
    snprintf(goal, sizeof goal, "%.120s", run->goal ? run->goal : "");
    for (char *p = goal; *p; p++)
        if (*p == '\n')
            *p = ' ';
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c) {
        const char *id = json_get_str(c, "id", "");
        const char *rule = json_get_str(c, "rule", NULL);
        const char *step = json_get_str(c, "step", "");
        bool fired = false;
        int lines = 0; /* this run's lines of this constraint */
        size_t k;
        json_t *h;
        json_array_foreach(old, k, h) {
            fired = fired || (!strcmp(json_get_str(h, "constraint", ""), id) &&
                              !strcmp(json_get_str(h, "kind", "hit"), "hit"));
        }
        for (size_t s = 0; s < t->n; s++) {
            const evolve_step *st = &t->steps[s];
            const char *kind = NULL;
            if (st->denied && names_rule(st->output, rule))
                kind = "hit";
            else if (!st->denied && fired && *step && !strcmp(st->key, step))
                kind = "override";
            /* A model that keeps running into the rule would otherwise
             * grow the ledger without bound: past the cap, a run's further
             * firings of one constraint are not written (nor counted). */
            if (!kind || lines >= HITS_PER_RUN_MAX)
                continue;
            lines++;
            json_t *line = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "kind", kind, "session",
                                     run->session_id, "run", run->run_id, "constraint", id, "tool",
                                     st->tool, "input", st->input, "goal", goal);
            loom_error err;
            if (line && evolve_ledger_append(root, HITS, line, &err) == 0 && !strcmp(kind, "hit")) {
                hits++;
                fired = true;
            }
            json_decref(line);
        }
    }
    json_decref(old);
    json_decref(cs);
    return hits;
}

/* Seconds since the epoch of an ISO-8601 UTC time; -1 when it is not one. */
static long long iso_seconds(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    int y, mo, d, h, mi, se;
    if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &se) != 6)
        return -1;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = se;
    return (long long)timegm(&tm);
}

json_t *evolve_audit(const evolve_config *cfg, const char *root, loom_error *err)
{
    (void)err;
    json_t *cs = evolve_constraints_read(root);
    json_t *hits = evolve_ledger_read(root, HITS, NULL);
    json_t *runs = evolve_ledger_read(root, ".loom/mf/runs.jsonl", NULL);
    json_t *out = json_array();
    long long now = clock_wall_ms() / 1000;
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c) {
        const char *id = json_get_str(c, "id", "");
        const char *at = json_get_str(c, "accepted_at", "");
        long long since = iso_seconds(at);
        json_t *row = json_deep_copy(c);
        json_object_set_new(row, "age_days",
                            json_integer(since < 0 || now < since ? 0 : (now - since) / 86400));
        int n_hits = 0, n_over = 0;
        json_t *last = NULL;
        size_t k;
        json_t *h;
        json_array_foreach(hits, k, h) {
            if (strcmp(json_get_str(h, "constraint", ""), id) != 0)
                continue;
            if (!strcmp(json_get_str(h, "kind", "hit"), "override"))
                n_over++;
            else {
                n_hits++;
                last = h;
            }
        }
        json_t *sessions = json_object();
        json_array_foreach(runs, k, h) {
            if (strcmp(json_get_str(h, "ts", ""), at) > 0)
                json_object_set_new(sessions, json_get_str(h, "session", "?"), json_true());
        }
        size_t n_sessions = json_object_size(sessions);
        json_decref(sessions);
        json_object_set_new(row, "hits", json_integer(n_hits));
        json_object_set_new(row, "overrides", json_integer(n_over));
        json_object_set_new(row, "sessions_since", json_integer((json_int_t)n_sessions));
        json_object_set_new(row, "last_blocked",
                            last ? json_pack("{s:s,s:s,s:s}", "ts", json_get_str(last, "ts", ""),
                                             "session", json_get_str(last, "session", ""), "task",
                                             json_get_str(last, "goal", ""))
                                 : json_null());
        const char *rule = json_get_str(c, "rule", NULL);
        bool present = rule ? rule_present(root, json_get_str(c, "behavior", "deny"), rule)
                            : line_present(root, id);
        json_object_set_new(row, "present", json_boolean(present));
        json_t *why = json_array();
        if (!present)
            json_array_append_new(why, json_string(rule ? "the rule was edited or removed in "
                                                          ".loom/settings.json"
                                                        : "the line was edited or removed in "
                                                          "AGENTS.md"));
        if (n_hits == 0 && (int)n_sessions >= cfg->retire_after)
            json_array_append_new(why, json_sprintf("never fired in %zu sessions (the limit is %d)",
                                                    n_sessions, cfg->retire_after));
        if (n_over > 0)
            json_array_append_new(why, json_sprintf("it blocked a task the user then let through "
                                                    "(%d override%s)",
                                                    n_over, n_over == 1 ? "" : "s"));
        json_object_set_new(row, "retire", json_boolean(json_array_size(why) > 0));
        json_object_set_new(row, "retire_why", why);
        json_array_append_new(out, row);
    }
    json_decref(cs);
    json_decref(hits);
    json_decref(runs);
    return out;
}
