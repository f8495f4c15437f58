/* proposals.c — what E2 and E4 propose and what a person decides about
 * every proposal (`loom evolve review`).
 *
 * A proposal is a file where its kind would live, under a proposed/
 * folder nothing loads:
 *   skill       <root>/.loom/skills/proposed/<name>/SKILL.md
 *   constraint  <root>/.loom/constraints/proposed/<name>.md (constraints.c)
 *   agent       <root>/.loom/agents/proposed/<name>.md
 * Accepting moves a skill to .loom/skills/<name>/ (the Skill tool offers
 * it from the next run), an agent to .loom/agents/<name>.md, and writes a
 * constraint's rule where the permission engine reads it. Rejecting
 * removes the file. Both are lines of mf/review.jsonl, and a decided
 * kind/name is never proposed again. No state; any thread. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "ext/evolve/evolve_internal.h"
#include "ext/skills/skills_internal.h"

#define PROPOSAL_MAX_BYTES (256 * 1024)

static const struct kind_row {
    const char *kind;
    const char *dir;      /* the proposed/ folder */
    const char *accepted; /* where an accepted one goes; NULL: constraints.c decides */
    bool folder;          /* <name>/SKILL.md rather than <name>.md */
} kinds[] = {
    {"skill", ".loom/skills/proposed", ".loom/skills", true},
    {"constraint", ".loom/constraints/proposed", NULL, false},
    {"agent", ".loom/agents/proposed", ".loom/agents", false},
};
#define N_KINDS (sizeof kinds / sizeof *kinds)

bool evolve_decided(const char *root, const char *kind, const char *name)
{
    json_t *rows = evolve_ledger_read(root, ".loom/mf/review.jsonl", NULL);
    bool decided = false;
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r) {
        const char *a = json_get_str(r, "action", "");
        if (!strcmp(json_get_str(r, "kind", ""), kind) && !strcmp(json_get_str(r, "name", ""), name) &&
            (!strcmp(a, "accept") || !strcmp(a, "reject")))
            decided = true;
    }
    json_decref(rows);
    return decided;
}

static char *proposal_path(const char *root, const struct kind_row *k, const char *name)
{
    loom_str s = {0};
    if (k->folder)
        str_printf(&s, "%s/%s/SKILL.md", k->dir, name);
    else
        str_printf(&s, "%s/%s.md", k->dir, name);
    char *p = evolve_path(root, str_cstr(&s));
    str_free(&s);
    return p;
}

static const struct kind_row *kind_of(const char *kind)
{
    for (size_t i = 0; i < N_KINDS; i++)
        if (!strcmp(kinds[i].kind, kind))
            return &kinds[i];
    return NULL;
}

/* Writes a new proposal unless it was decided, is waiting already, or the
 * accepted one exists. 0 with *id set when written, 0 with *id NULL when
 * not needed. */
int evolve_write_proposal(const char *root, const char *kind, const char *name, const char *text,
                          char **id, loom_error *err)
{
    *id = NULL;
    const struct kind_row *k = kind_of(kind);
    char *path = proposal_path(root, k, name);
    bool skip = evolve_decided(root, kind, name) || file_exists(path) ||
                !evolve_path_inside(root, path);
    if (!skip && k->accepted) {
        loom_str s = {0};
        str_printf(&s, k->folder ? "%s/%s/SKILL.md" : "%s/%s.md", k->accepted, name);
        char *acc = evolve_path(root, str_cstr(&s));
        skip = file_exists(acc) || !evolve_path_inside(root, acc);
        free(acc);
        str_free(&s);
    }
    int rc = 0;
    if (!skip) {
        char *dir = xstrdup(path);
        *strrchr(dir, '/') = '\0';
        rc = file_mkdirs(dir, 0755, err);
        free(dir);
        if (rc == 0)
            rc = file_write_atomic(path, text, strlen(text), 0644, err);
        if (rc == 0) {
            loom_str s = {0};
            str_printf(&s, "%s/%s", kind, name);
            *id = str_steal(&s);
            json_t *line = json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", *id, "kind", kind, "name",
                                     name, "action", "propose", "path", path);
            loom_error lerr;
            evolve_ledger_append(root, ".loom/mf/review.jsonl", line, &lerr);
            json_decref(line);
        }
    }
    free(path);
    return rc;
}

/* A valid skill name from a pattern's steps: their words ([a-z0-9] runs,
 * lowercased), the tool names left out as noise, '-'-joined up to 48
 * characters at a word boundary. Readable rather than unique: a second
 * pattern with the same words finds the name taken and proposes nothing. */
static char *skill_name(const char *signature)
{
    static const char *const noise[] = {"bash", "read", "edit", "write", "skill", NULL};
    loom_str s = {0};
    const char *p = signature;
    while (*p) {
        while (*p && !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            p++;
        char w[49];
        size_t n = 0;
        for (; (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'); p++)
            if (n < sizeof w - 1)
                w[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        w[n] = '\0';
        bool skip = !n;
        for (size_t i = 0; noise[i] && !skip; i++)
            skip = !strcmp(w, noise[i]);
        if (skip)
            continue;
        if (s.len + 1 + n > 48)
            break;
        if (s.len)
            str_putc(&s, '-');
        str_puts(&s, w);
    }
    char *name = s.len ? str_steal(&s) : xstrdup("distilled-steps");
    if (!skill_name_valid(name)) {
        free(name);
        name = xstrdup("distilled-steps");
    }
    return name;
}

int evolve_propose_skill(const char *root, const mf_entry *pattern, char **id, loom_error *err)
{
    *id = NULL;
    char *name = skill_name(pattern->signature);
    loom_str t = {0};
    str_puts(&t, "---\n");
    str_printf(&t, "name: %s\n", name);
    loom_str d = {0};
    str_printf(&d, "Steps that worked in %lld earlier runs of this project: %.600s. Use for a "
                   "task like: %.300s",
               pattern->seen, pattern->signature, pattern->description);
    str_puts(&t, "description: ");
    json_put_string(&t, str_cstr(&d), d.len);
    str_puts(&t, "\n---\n\n");
    str_printf(&t, "# %s\n\nProposed by `loom evolve` (E2) from the M_f pattern seen %lld times "
                   "(sessions:",
               name, pattern->seen);
    for (size_t i = 0; pattern->sessions[i] && i < 10; i++)
        str_printf(&t, " %s", pattern->sessions[i]);
    str_puts(&t, ").\n\nFollow these steps, in order:\n");
    const char *p = pattern->signature;
    int k = 0;
    while (*p) {
        const char *e = strstr(p, " > ");
        size_t n = e ? (size_t)(e - p) : strlen(p);
        str_printf(&t, "\n%d. `%.*s`", ++k, (int)n, p);
        p += n + (e ? 3 : 0);
    }
    str_puts(&t, "\n\nA step is a tool and its key input: `Bash(git push)` is the program and "
                 "subcommand, `Edit(*.c)` a file of that pattern. Check each step's result before "
                 "the next.\n");
    int rc = evolve_write_proposal(root, "skill", name, str_cstr(&t), id, err);
    str_free(&d);
    str_free(&t);
    free(name);
    return rc;
}

int evolve_propose_agent(const char *root, const char *task_class, const json_t *runs, char **id,
                         loom_error *err)
{
    *id = NULL;
    loom_str name = {0};
    str_printf(&name, "%s-specialist", task_class);
    int max_turns = 0;
    loom_str stops = {0};
    size_t i;
    const json_t *r;
    json_array_foreach(runs, i, r) {
        int turns = (int)json_get_int(r, "turns", 0);
        if (turns > max_turns)
            max_turns = turns;
        if (i < 10)
            str_printf(&stops, "\n- session %s: %s after %d turns",
                       json_get_str(r, "session", "?"), json_get_str(r, "stop_reason", "?"), turns);
    }
    int budget = max_turns * 2 < 20 ? 20 : max_turns * 2;
    if (budget > 500)
        budget = 500;
    loom_str t = {0};
    str_printf(&t, "---\nname: %s\n", str_cstr(&name));
    loom_str d = {0};
    str_printf(&d, "Specialist for %s tasks, which stopped early %zu times in this project. Use "
                   "for tasks about %s.",
               task_class, json_array_size(runs), task_class);
    str_puts(&t, "description: ");
    json_put_string(&t, str_cstr(&d), d.len);
    str_printf(&t, "\nmaxTurns: %d\n---\n\n", budget);
    str_printf(&t,
               "You are a specialist for \"%s\" tasks in this project. Runs of this task class "
               "ended before they were done (proposed by `loom evolve`, E4):\n%s\n\nWork in "
               "small steps: plan first, do one part at a time, check each result, and report "
               "what is done and what is left before your turns run out.\n",
               task_class, str_cstr(&stops));
    int rc = evolve_write_proposal(root, "agent", str_cstr(&name), str_cstr(&t), id, err);
    str_free(&d);
    str_free(&t);
    str_free(&stops);
    str_free(&name);
    return rc;
}

/* ---- review ------------------------------------------------------------------- */

static void list_kind(const char *root, const struct kind_row *k, json_t *out)
{
    char *dir = evolve_path(root, k->dir);
    DIR *dh = opendir(dir);
    if (!dh) {
        free(dir);
        return;
    }
    struct dirent *de;
    json_t *names = json_array();
    while ((de = readdir(dh)) != NULL && json_array_size(names) < 1000) {
        size_t len = strlen(de->d_name);
        if (de->d_name[0] == '.')
            continue;
        if (k->folder)
            json_array_append_new(names, json_string(de->d_name));
        else if (len > 3 && !strcmp(de->d_name + len - 3, ".md"))
            json_array_append_new(names, json_stringn(de->d_name, len - 3));
    }
    closedir(dh);
    free(dir);
    /* readdir's order is the file system's: sort for a stable listing. */
    size_t n = json_array_size(names);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && strcmp(json_string_value(json_array_get(names, b - 1)),
                                           json_string_value(json_array_get(names, b))) > 0;
             b--) {
            json_t *x = json_incref(json_array_get(names, b - 1));
            json_array_set(names, b - 1, json_array_get(names, b));
            json_array_set_new(names, b, x);
        }
    size_t i;
    json_t *nm;
    json_array_foreach(names, i, nm) {
        const char *name = json_string_value(nm);
        char *path = proposal_path(root, k, name);
        if (!evolve_path_inside(root, path)) {
            /* A symlink out of the project: not a proposal of ours, and
             * accepting or rejecting it would move or delete a file
             * elsewhere. */
            free(path);
            continue;
        }
        loom_str why = {0};
        char *text = file_read_text(path, PROPOSAL_MAX_BYTES, FILE_TEXT_NOFOLLOW, &why);
        loom_error err;
        json_t *fm = text ? frontmatter_parse(text, NULL, &err) : NULL;
        loom_str id = {0};
        str_printf(&id, "%s/%s", k->kind, name);
        json_t *row = json_pack("{s:s,s:s,s:s,s:s}", "id", str_cstr(&id), "kind", k->kind, "name",
                                name, "path", path);
        if (row) {
            const char *desc = json_get_str(fm, "description", NULL);
            json_object_set_new(row, "description",
                                desc ? json_string(desc)
                                     : json_string(text ? "(no description: the frontmatter does "
                                                          "not read)"
                                                        : str_cstr(&why)));
            if (json_get_str(fm, "rule", NULL))
                json_object_set_new(row, "rule", json_string(json_get_str(fm, "rule", "")));
            json_array_append_new(out, row);
        }
        json_decref(fm);
        str_free(&id);
        str_free(&why);
        free(text);
        free(path);
    }
    json_decref(names);
}

json_t *evolve_review_list(const char *root, loom_error *err)
{
    (void)err;
    json_t *out = json_array();
    for (size_t i = 0; i < N_KINDS; i++)
        list_kind(root, &kinds[i], out);
    return out;
}

/* The proposal an id names: "kind/name", or a bare name that one kind has. */
static json_t *find(const char *root, const char *id, loom_error *err)
{
    json_t *all = evolve_review_list(root, err);
    json_t *exact = NULL, *bare = NULL;
    int n_bare = 0;
    size_t i;
    json_t *r;
    json_array_foreach(all, i, r) {
        if (!strcmp(json_get_str(r, "id", ""), id))
            exact = r;
        else if (!strcmp(json_get_str(r, "name", ""), id)) {
            bare = r;
            n_bare++;
        }
    }
    json_t *hit = exact ? exact : n_bare == 1 ? bare : NULL;
    if (!hit && n_bare > 1)
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "%s names proposals of several kinds: say skill/%s, constraint/%s or "
                       "agent/%s",
                       id, id, id, id);
    else if (!hit)
        loom_error_set(err, LOOM_ERR_RESOURCE_NOT_FOUND,
                       "no proposal %s waits for review (loom evolve review lists them)", id);
    json_incref(hit);
    json_decref(all);
    return hit;
}

json_t *evolve_review_show(const char *root, const char *id, loom_error *err)
{
    json_t *p = find(root, id, err);
    if (!p)
        return NULL;
    loom_str why = {0};
    char *text = file_read_text(json_get_str(p, "path", ""), PROPOSAL_MAX_BYTES,
                                FILE_TEXT_NOFOLLOW, &why);
    if (!text) {
        loom_error_set(err, LOOM_ERR_IO, "%s: %s", json_get_str(p, "path", ""), str_cstr(&why));
        str_free(&why);
        json_decref(p);
        return NULL;
    }
    json_t *tv = json_string(text);
    json_object_set_new(p, "text", tv ? tv : json_string("(the file is not UTF-8 text)"));
    free(text);
    str_free(&why);
    return p;
}

static void swarn(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg; /* a droppable key: the skills loader warns about it on load */
}

/* The file still is what its kind needs. */
static int check_text(const char *kind, const char *name, const char *path, const char *text,
                      loom_error *err)
{
    if (!strcmp(kind, "skill")) {
        skill_entry *e = skill_entry_parse(path, name, text, swarn, NULL, err);
        if (!e)
            return -LOOM_ERR_CONFIG;
        skill_entry_free(e);
        return 0;
    }
    if (!strcmp(kind, "constraint"))
        return evolve_constraint_check(path, text, err);
    /* An agent file: the frontmatter Claude Code's agent files need. */
    json_t *fm = frontmatter_parse(text, NULL, err);
    if (!fm)
        return loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, err->message);
    int rc = 0;
    if (!json_get_str(fm, "name", NULL) || !json_get_str(fm, "description", NULL))
        rc = loom_error_set(err, LOOM_ERR_CONFIG,
                            "%s: an agent file needs a name and a description", path);
    json_decref(fm);
    return rc;
}

static void record(const char *root, const json_t *p, const char *action)
{
    json_t *line = json_pack("{s:s,s:s,s:s,s:s}", "id", json_get_str(p, "id", ""), "kind",
                             json_get_str(p, "kind", ""), "name", json_get_str(p, "name", ""),
                             "action", action);
    loom_error err;
    if (line)
        evolve_ledger_append(root, ".loom/mf/review.jsonl", line, &err);
    json_decref(line);
}

static int move_into(const char *from, const char *to, loom_error *err)
{
    char *dir = xstrdup(to);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    int rc = file_mkdirs(dir, 0755, err);
    free(dir);
    if (rc != 0)
        return rc;
    if (file_exists(to))
        return loom_error_set(err, LOOM_ERR_INVALID_STATE_TRANSITION, "%s exists already: not replaced", to);
    if (rename(from, to) != 0)
        return loom_error_set(err, LOOM_ERR_IO, "cannot move %s to %s: %s", from, to,
                              strerror(errno));
    return 0;
}

json_t *evolve_review_decide(const char *root, const char *id, bool accept, loom_error *err)
{
    if (!evolve_root_contained(root)) {
        loom_error_set(err, LOOM_ERR_PROJECT_SCOPE_DENIED,
                       "%s/.loom leads outside the project: nothing changed", root);
        return NULL;
    }
    json_t *p = find(root, id, err);
    if (!p)
        return NULL;
    const char *kind = json_get_str(p, "kind", "");
    const char *name = json_get_str(p, "name", "");
    const char *path = json_get_str(p, "path", "");
    const struct kind_row *k = kind_of(kind);
    json_t *out = json_pack("{s:s,s:s}", "id", json_get_str(p, "id", ""), "action",
                            accept ? "accept" : "reject");
    int lock = evolve_lock(root);
    int rc = 0;
    if (!accept) {
        if (k->folder) {
            char *dir = xstrdup(path);
            *strrchr(dir, '/') = '\0';
            rc = unlink(path) == 0 && rmdir(dir) == 0 ? 0 : -1;
            if (rc != 0)
                rc = loom_error_set(err, LOOM_ERR_IO, "cannot remove %s: %s", dir, strerror(errno));
            free(dir);
        } else if (unlink(path) != 0) {
            rc = loom_error_set(err, LOOM_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        }
    } else {
        loom_str why = {0};
        char *text = file_read_text(path, PROPOSAL_MAX_BYTES, FILE_TEXT_NOFOLLOW, &why);
        if (!text)
            rc = loom_error_set(err, LOOM_ERR_IO, "%s: %s", path, str_cstr(&why));
        else
            rc = check_text(kind, name, path, text, err);
        free(text);
        str_free(&why);
        if (rc == 0 && k->accepted) {
            loom_str to = {0};
            str_printf(&to, k->folder ? "%s/%s/SKILL.md" : "%s/%s.md", k->accepted, name);
            char *dest = evolve_path(root, str_cstr(&to));
            str_free(&to);
            rc = evolve_path_inside(root, dest)
                     ? move_into(path, dest, err)
                     : loom_error_set(err, LOOM_ERR_PROJECT_SCOPE_DENIED,
                                      "%s leads outside the project: nothing changed", dest);
            if (rc == 0 && k->folder) {
                char *dir = xstrdup(path);
                *strrchr(dir, '/') = '\0';
                rmdir(dir);
                free(dir);
            }
            if (rc == 0)
                json_object_set_new(out, "path", json_string(dest));
            free(dest);
        } else if (rc == 0) {
            json_t *c = evolve_constraint_accept(root, path, err);
            if (!c)
                rc = -1;
            else {
                json_object_update(out, c);
                json_decref(c);
                unlink(path);
            }
        }
    }
    if (rc == 0)
        record(root, p, accept ? "accept" : "reject");
    evolve_unlock(lock);
    json_decref(p);
    if (rc != 0) {
        json_decref(out);
        return NULL;
    }
    return out;
}

json_t *evolve_review_edited(const char *root, const char *id, loom_error *err)
{
    json_t *p = find(root, id, err);
    if (!p)
        return NULL;
    const char *path = json_get_str(p, "path", "");
    loom_str why = {0};
    char *text = file_read_text(path, PROPOSAL_MAX_BYTES, FILE_TEXT_NOFOLLOW, &why);
    int rc = text ? check_text(json_get_str(p, "kind", ""), json_get_str(p, "name", ""), path,
                               text, err)
                  : loom_error_set(err, LOOM_ERR_IO, "%s: %s", path, str_cstr(&why));
    free(text);
    str_free(&why);
    if (rc != 0) {
        json_decref(p);
        return NULL;
    }
    record(root, p, "edit");
    json_t *out = json_pack("{s:s,s:s}", "id", json_get_str(p, "id", ""), "path", path);
    json_decref(p);
    return out;
}
