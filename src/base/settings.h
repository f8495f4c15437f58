/* settings.h — the settings files: where Loom's home is, which files make
 * up the settings and in what order, reading one, and the schema of the keys
 * Loom knows.
 *
 * The layers, lowest first (a later file wins; DESIGN §4):
 *   user     loom_home()/settings.json   ($LOOM_HOME/settings.json or ~/.loom/settings.json)
 *   project  CWD/.loom/settings.json
 *   local    CWD/.loom/settings.local.json
 * Loom reads no other settings file (not Claude Code's .claude/ ones; the
 * tamper guard only protects those from the agent's writes).
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

/* The settings as read for one cwd. */
typedef struct settings_files {
    char *path[SETTINGS_LAYERS]; /* each layer's file (absolute when cwd is) */
    json_t *doc[SETTINGS_LAYERS]; /* its document, NULL when the file is absent */
    json_t *warnings;            /* array of strings: the schema's warnings, user's first */
} settings_files;

/* Reads and checks the three layers for cwd (NULL: the current directory).
 * 0 with *out filled (free with settings_files_free), or negative with err
 * naming the file: unreadable, not JSON (a torn file included), not an
 * object, or a key of the wrong type. The local file is read first, so of
 * several bad files the local one is reported. On error *out is empty. */
int settings_load(const char *cwd, settings_files *out, loom_error *err);
void settings_files_free(settings_files *f);

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
