/* store.h — where session files live and how a user names one.
 *
 * Sessions are kept per project under loom_home()/projects/<slug>/
 * (base/settings.h: $LOOM_HOME, else ~/.loom), the slug being the absolute working directory
 * with every byte outside [A-Za-z0-9] replaced by '-' — the convention
 * Claude Code users already know. --resume takes a session id or a unique
 * prefix of one, searched across all projects; --continue takes the most
 * recently modified session of the current directory.
 */
#ifndef LOOM_SESSION_STORE_H
#define LOOM_SESSION_STORE_H

#include "base/error.h"

/* The slug of a directory: "/home/a/my.proj" → "-home-a-my-proj". A
 * relative cwd is made absolute against the process's working directory
 * first. Slugs longer than 200 bytes keep their first 183 bytes and end in
 * '-' plus 16 hex digits of a hash of the whole path, so they stay under
 * the file-name limit and distinct. Caller frees. */
char *store_slug(const char *cwd);
/* loom_home()/projects/<slug>. Not created here (transcript_create does
 * that when a session is written). Caller frees. */
char *store_project_dir(const char *cwd);

/* The path of the session named by id_or_prefix: an exact id, else the one
 * session whose id starts with it, across every project. A path to an
 * existing .jsonl file is accepted as is. On success *path is set (caller
 * frees) and 0 returned; otherwise -code: resource_not_found, or
 * invalid_request when the prefix is ambiguous (the message lists up to
 * eight candidates, one a line with its title) or empty. */
int session_find(const char *id_or_prefix, char **path, loom_error *err);

/* The most recently modified session file of cwd's project (--continue).
 * *path set (caller frees) and 0, or -code resource_not_found. */
int session_latest(const char *cwd, char **path, loom_error *err);

#endif
