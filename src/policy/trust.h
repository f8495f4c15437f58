/* trust.h — workspace trust: whether the user trusts a folder's own
 * settings files, and what those files may say until they do.
 *
 * A repository ships `.loom/settings.json` and can ship (commit)
 * `.loom/settings.local.json` too, so both are the repository's words, not
 * the user's. Until the workspace is trusted they may only tighten the
 * user's limits: trust_filter keeps what tightens (deny and ask rules, a
 * stricter mode, lower budgets, sandbox on…) and drops everything else with
 * a notice naming the file and the key. The rule is a whitelist: a key this
 * file does not know is dropped, so a setting added later is untrusted until
 * someone decides here that it only tightens (docs/permissions.md, "Workspace
 * trust").
 *
 * Pure functions over JSON documents, no state; safe from any thread
 * (trust_workspace_trusted reads the environment). */
#ifndef LOOM_POLICY_TRUST_H
#define LOOM_POLICY_TRUST_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/* The end of every notice: how to make the ignored setting count. */
#define TRUST_HINT                                                                      \
    "the workspace is not trusted (run loom here interactively to trust it, or add it " \
    "to trustedWorkspaces)"

/* Whether the user trusts the folder cwd (absolute, symlinks resolved):
 * LOOM_TRUST_WORKSPACE=1 in the environment or in the user settings' "env"
 * block, or the user settings document
 * lists cwd or a folder above it under "trustedWorkspaces" (entries are
 * compared as written and with their symlinks resolved). */
bool trust_workspace_trusted(const json_t *user, const char *cwd);

/* What an untrusted settings document may say: a new document (caller
 * decrefs) with only the parts of doc that tighten. base holds the limits
 * the user set, as option name → string ("permission_mode", "max_turns",
 * "max_tokens_total", "max_usd", "token_budget", "context_window",
 * "max_output_tokens"; absent: no limit of the user's); a project value is
 * kept only when it is at least as strict. Hooks are kept: the hook
 * registry keeps untrusted hooks without running them, and says so.
 * Every dropped key appends one notice (a string) to notices, e.g.
 * `ignored .loom/settings.json: permissions.allow[0] "Bash" — the workspace
 * is not trusted (…)`; file is the name used there. */
json_t *trust_filter(const json_t *doc, const char *file, const json_t *base, json_t *notices);

/* Whether an untrusted permission mode may replace the user's: plan is the
 * strictest, then dontAsk, then default; every other mode is accepted only
 * when it is the user's own. Unknown names are refused. */
bool trust_mode_tightens(const char *mode, const char *user_mode);

/* Records dir in "trustedWorkspaces" of the settings file at path (created
 * with its folder when absent; other keys are kept; written atomically, mode
 * 0600). A file that is not a JSON object is left alone: error. 0 or
 * negative with err. */
int trust_remember(const char *path, const char *dir, loom_error *err);

#endif
