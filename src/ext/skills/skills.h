/* skills.h — Agent Skills: the SKILL.md folders a workspace has, what the
 * model is shown of them, and what happens when one is used.
 *
 * A skill is a folder holding SKILL.md: YAML frontmatter, then the body
 * (the open Agent Skills format, plus Claude Code's fields; docs/skills.md).
 * Progressive disclosure (seed 000 row 5.2): the model sees only each
 * skill's name and description, in the catalog section of the dynamic
 * system part, capped at a share of the window; the body enters the
 * context when the model calls the Skill tool or the person types
 * `/name args`. Bundled files are listed by path, never read here.
 *
 * Model-invocable custom commands (ext/commands/commands.h) are offered and
 * activated through the same catalog and tool, as in Claude Code 2.x: this
 * module includes commands.h (one way).
 *
 * Threading: a catalog is built once and read-only afterwards (any thread).
 * A skill_session belongs to one loom_session; its functions are called on
 * the run's thread (the Skill tool runs alone: not concurrency-safe) or
 * between runs. */
#ifndef LOOM_EXT_SKILLS_SKILLS_H
#define LOOM_EXT_SKILLS_SKILLS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/str.h"
#include "ext/commands/commands.h"
#include "ext/sources.h"
#include "tools/registry.h"
#include "tools/tool.h"

#define SKILL_NAME_MAX 64           /* Agent Skills: name ≤ 64 chars, [a-z0-9-] */
#define SKILL_DESCRIPTION_MAX 1024  /* Agent Skills: description ≤ 1024 chars */
/* The catalog's share of the context window, in tokens (Claude Code gives
 * skill descriptions about 2% of the window); never less than the floor. */
#define SKILL_CATALOG_SHARE 0.02
#define SKILL_CATALOG_FLOOR_TOKENS 2000
#define SKILL_BODY_CAP 60000        /* bytes of a body injected; more is cut with a note */
#define SKILL_FILES_MAX 50          /* bundled files listed */

typedef struct skill_def {
    char *name;                 /* "pdf-tools"; a plugin's: "plugin:pdf-tools" */
    char *description;
    char *dir;                  /* the skill's folder, absolute */
    char *path;                 /* its SKILL.md */
    char *license, *compatibility;  /* may be NULL */
    json_t *metadata;           /* the frontmatter's metadata object, or NULL */
    char **allowed_tools;       /* rule strings, NULL-terminated; NULL: none */
    bool disable_model_invocation;  /* not in the catalog; only `/name` */
    bool user_invocable;        /* default true: `/name` works */
    bool context_fork;          /* context: fork — runs in a sub-agent (agent, or general-purpose) */
    char *agent;                /* may be NULL */
    char *model;                /* may be NULL */
    char *argument_hint;        /* may be NULL */
    char **paths;               /* globs; NULL: always offered. Set: offered once a
                                   file matching one was read or written */
    ext_scope scope;
    char *plugin;               /* the plugin's name, or NULL */
} skill_def;

typedef struct skill_catalog skill_catalog;

/* Loads every skill of the folders ext_dirs_for("skills", o) gives; later
 * folders win by name, plugins' names are prefixed "plugin:". A malformed
 * SKILL.md (no frontmatter, a bad name, a description too long, a name
 * that is not its folder's) is a warning naming the file and the problem;
 * the rest load. NULL only when out of memory. */
skill_catalog *skill_catalog_load(const ext_source_opts *o, loom_error *err);
void skill_catalog_free(skill_catalog *c);
size_t skill_catalog_count(const skill_catalog *c);
const skill_def *skill_catalog_at(const skill_catalog *c, size_t i);
const skill_def *skill_catalog_find(const skill_catalog *c, const char *name);
/* Warnings of malformed files, then notices of skipped folders. */
size_t skill_catalog_warning_count(const skill_catalog *c);
const char *skill_catalog_warning(const skill_catalog *c, size_t i);
/* The files of the skill's folder besides SKILL.md, relative, sorted, at
 * most SKILL_FILES_MAX (NULL-terminated; caller frees with str_list_free
 * or free each). */
char **skill_files(const skill_def *d);

typedef struct skill_session skill_session;

typedef struct skill_session_opts {
    const skill_catalog *skills;        /* borrowed; outlives the session */
    const command_catalog *commands;    /* model-invocable commands; may be NULL */
    int64_t window_tokens;              /* for the catalog's budget */
} skill_session_opts;

skill_session *skill_session_new(const skill_session_opts *o);
void skill_session_free(skill_session *ss);

/* The registry the Skill tool runs in (it calls Agent for a context: fork
 * skill, and Bash through the pipeline for a command's !`cmd`); set by the
 * tool-set port each time the set changes. Borrowed. */
void skill_session_set_registry(skill_session *ss, const tool_registry *reg);

/* The Skill tool for this session: its "name" parameter is an enum of the
 * skills and commands the catalog offers (NULL when it offers none, so no
 * tool is added). The def's impl is ss; the def lives as long as ss and is
 * rebuilt by skill_session_catalog_text when the offer changes. */
const tool_def *skill_session_tool(skill_session *ss);

/* The catalog section of the system's extension part: "# Skills" with one
 * line per offered skill or command ("- name: description"), cut to the
 * budget (the rest named in a count). Appends to out; *tokens (may be
 * NULL) gets its estimate and *offered the number listed. The first call
 * in a run emits nothing: the caller emits skill.offered from
 * skill_session_offer_json. */
void skill_session_catalog_text(skill_session *ss, loom_str *out, int64_t *tokens,
                                size_t *offered);
/* {"skills": [names offered], "tokens", "truncated"} for skill.offered. */
json_t *skill_session_offer_json(skill_session *ss);

/* "# Active skills": the bodies of skills activated earlier whose
 * activation is no longer in the conversation (a compaction summarized it
 * away), so an activated skill survives compaction; "" when none. present
 * answers whether the tool call call_id is still in the active chain.
 * Appends to out. */
void skill_session_active_text(skill_session *ss, bool (*present)(void *ctx, const char *call_id),
                               void *ctx, loom_str *out);

/* What one activation produced. */
typedef struct skill_activation {
    loom_str text;          /* what enters the context: the body, its folder, its files */
    bool already_active;    /* the same skill was active: text says so, no body */
    const skill_def *skill; /* NULL for a command */
    const command_def *command;
    json_t *event;          /* payload for skill.activated (owned), NULL when already active */
} skill_activation;
void skill_activation_free(skill_activation *a);

/* Activates name with args (may be NULL). via: "tool" (the model's Skill
 * call; call_id its id) or "user" (`/name args`; call_id: the id of the
 * record that carries the text, so skill_session_active_text can tell when
 * a compaction took it away — NULL: taken as always present, never
 * repeated). The Skill tool itself emits skill.activated through
 * ctx->emit; for "user" the caller emits out->event. Grants
 * the skill's allowed-tools for the rest of the run
 * (governance_grant_run on ctx->gov). A context: fork skill runs in a
 * sub-agent through the Agent tool and text is its result. 0, or -1 with
 * err (unknown name, not invocable that way). */
int skill_session_activate(skill_session *ss, const char *name, const char *args, const char *via,
                           const char *call_id, tool_ctx *ctx, skill_activation *out,
                           loom_error *err);

/* Per-run report (seed 000 M4): called at run start, for every tool call
 * the run makes after its pipeline (name, input as run), and at run end.
 * A skill counts as used when a later call of the run matched its
 * allowed-tools or touched a file in its folder, or — a skill with
 * neither — when any tool call followed. report: {"offered": [names],
 * "activated": [{"name", "via", "used"}], "offered_count",
 * "activated_count", "used_count"} (new reference). */
void skill_session_run_begin(skill_session *ss);
void skill_session_observe_call(skill_session *ss, const char *tool, const json_t *input,
                                const char *cwd);
json_t *skill_session_run_report(skill_session *ss);

#endif
