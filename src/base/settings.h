/* settings.h — the settings files: where Loom's home is, which files make
 * up the settings and in what order, reading one, and the schema of the keys
 * Loom knows.
 *
 * The layers, lowest first (a later file wins; DESIGN §4):
 *   user     loom_home()/settings.json   ($LOOM_HOME/settings.json or ~/.loom/settings.json)
 *   project  CWD/.loom/settings.json
 *   local    CWD/.loom/settings.local.json
 * Each layer has a Claude Code file below Loom's (docs/compat.md):
 *   user     settings_claude_home()/settings.json  (~/.claude, or $CLAUDE_CONFIG_DIR)
 *   project  CWD/.claude/settings.json
 *   local    CWD/.claude/settings.local.json
 * settings_merge makes one document of the two: Loom's file wins a key
 * both set, while the lists of rules and hooks concatenate, so a rule of
 * either file counts. With "compat": {"claude": false} (settings_compat_claude)
 * a Claude Code file gives only its permissions.deny and permissions.ask
 * rules (and sandbox.denyRead): those always apply (fail closed), the rest
 * is skipped.
 *
 * Every document is checked against the schema as it is read: a key Loom
 * does not know is a warning naming the file and the key, with the nearest
 * known key when one is close; a known key holding the wrong JSON type is an
 * error naming the file, the key and the type it must have. Keys Claude Code
 * documents and Loom does not use are known too, so settings a user brings
 * along load without warnings, and their values are never judged: a key
 * Loom does not read can never stop it. A null value counts as not set.
 *
 * This module reads and checks, and sets one key of a file for the
 * commands that change a setting (settings_write_key). The project and local files are the
 * repository's words: the caller (api/config.c, sandbox/sandbox_policy.c) passes
 * them through policy/trust.h's filter before using them — base knows
 * nothing of trust.
 *
 * No state; thread-safe (loom_home reads the environment and the password
 * database). */
#ifndef LOOM_BASE_SETTINGS_H
#define LOOM_BASE_SETTINGS_H

#include <jansson.h>

#include "base/error.h"

typedef enum {
    SETTINGS_USER,
    SETTINGS_PROJECT,
    SETTINGS_LOCAL,
    SETTINGS_LAYERS,
} settings_layer;

/* Loom's home: $LOOM_HOME when set and not empty, else $HOME/.loom, else
 * (HOME unset or empty) the home directory the password database gives the
 * user, /.loom when it gives none. Never NULL; caller frees. */
char *loom_home(void);

/* loom_home()/settings.json. Caller frees. */
char *settings_user_path(void);

/* The layer's file for cwd (the user's ignores cwd). Caller frees. */
char *settings_layer_path(settings_layer layer, const char *cwd);

/* How notices name a layer's file: "user settings", ".loom/settings.json",
 * ".loom/settings.local.json". */
const char *settings_layer_name(settings_layer layer);

/* Claude Code's folder: $CLAUDE_CONFIG_DIR when set and not empty (Claude
 * Code's own override), else $HOME/.claude (the password database's home
 * when HOME is unset or empty). Never NULL; caller frees. */
char *settings_claude_home(void);

/* The layer's Claude Code file for cwd. Caller frees. */
char *settings_claude_path(settings_layer layer, const char *cwd);

/* How notices name a layer's Claude Code file: "~/.claude/settings.json",
 * ".claude/settings.json", ".claude/settings.local.json". */
const char *settings_claude_name(settings_layer layer);

/* Whether Claude Code's files count in full: the option's text when set
 * ("compat_claude": true|false, 1|0, yes|no, on|off), else the environment's
 * LOOM_COMPAT_CLAUDE, else "compat": {"claude": …} of user (Loom's user
 * settings document; may be NULL), else true. Only the user's own settings
 * can turn it off: a repository's settings are never asked (it would only
 * drop its own rules, and a repository's deny rules are the user's
 * protection too). A value that is none of those words counts as not set. */
bool settings_compat_claude(const char *option, const json_t *user);

/* The settings as read for one cwd. */
typedef struct settings_files {
    char *path[SETTINGS_LAYERS]; /* each layer's file (absolute when cwd is) */
    json_t *doc[SETTINGS_LAYERS]; /* its document, NULL when the file is absent */
    /* The layer's Claude Code file and its document (NULL: absent). When
     * compat is off the document holds only permissions.deny/ask and
     * sandbox.denyRead. Neither
     * is merged into doc: the caller filters each by trust under its own
     * name first, then calls settings_merge. */
    char *claude_path[SETTINGS_LAYERS];
    json_t *claude_doc[SETTINGS_LAYERS];
    bool compat;                 /* settings_compat_claude's answer */
    json_t *warnings;            /* array of strings: the schema's warnings, user's first */
    /* Every file looked at and found, in layer order (Claude Code's before
     * Loom's): [{"path", "kind": "settings", "level": user|project|local,
     * "origin": loom|claude, "state": loaded|partial, "why"?}]. */
    json_t *sources;
} settings_files;

/* Reads and checks the three layers and their Claude Code files for cwd
 * (NULL: the current directory); compat_option as settings_compat_claude's
 * (NULL: not set). 0 with *out filled (free with settings_files_free), or
 * negative with err naming the file: unreadable, not JSON (a torn file
 * included), not an object, or a key of the wrong type — a Claude Code file
 * as much as Loom's, compat on or off (its deny rules must be read). The
 * local files are read first, so of several bad files a local one is
 * reported. On error *out is empty. */
int settings_load_opts(const char *cwd, const char *compat_option, settings_files *out,
                       loom_error *err);
/* settings_load_opts without the option. */
int settings_load(const char *cwd, settings_files *out, loom_error *err);
void settings_files_free(settings_files *f);

/* One document of a layer's two (either may be NULL; NULL when both are):
 * claude's keys, then loom's over them. A top-level object both have
 * merges key by key (an entry of "env", "mcpServers" or "models" is taken
 * whole from one file); the lists
 * permissions.allow/ask/deny/additionalDirectories, every hooks event,
 * enabledMcpjsonServers, disabledMcpjsonServers and sandbox
 * writablePaths/denyRead/allowUnixSockets concatenate (claude's first);
 * any other value of loom's replaces claude's. New reference. */
json_t *settings_merge(const json_t *claude, const json_t *loom);

/* Reads one settings file: 0 with *doc (caller decrefs; NULL when the file
 * does not exist), or negative with err for an unreadable file, invalid
 * JSON or a document that is not an object ("PATH is not a JSON object").
 * No schema check: for code that rewrites a file (trust_remember, "always
 * allow") and must keep whatever else it holds. */
int settings_read(const char *path, json_t **doc, loom_error *err);

/* Sets key to value (NULL: removes the key) in the settings file at path:
 * read with settings_read, the other keys kept, written back atomically
 * (an existing file keeps its mode, a new one is 0600; its folder is made
 * when missing). A file that cannot be read as settings is left as it is:
 * negative with err ("…; not changed"). 0 or negative with err. */
int settings_write_key(const char *path, const char *key, const json_t *value, loom_error *err);

/* Checks doc against the schema: unknown keys append a warning (a string) to
 * warnings; the first key of the wrong type is an error. file names the
 * document in both. 0 or negative with err. */
int settings_check(const json_t *doc, const char *file, json_t *warnings, loom_error *err);

#endif
