/* managed.h — the modes an administrator (or any settings file) switched
 * off: Claude Code's `disableBypassPermissionsMode` and `disableAutoMode`,
 * each "disable", in `permissions` (or at the top level). The managed
 * settings file, /etc/loom/managed-settings.json (plus the file
 * $LOOM_MANAGED_SETTINGS names, which can only switch off more), is read
 * here and nowhere else; a disable in any file holds, and no file, flag or
 * API call can switch a disabled mode back on: the disables add up (OR),
 * nothing reads an "enable". bypassPermissions' disable covers fullAccess
 * too (it skips even more). Threading: built once at governance_new, then
 * only read. */
#ifndef LOOM_GOVERNANCE_MANAGED_H
#define LOOM_GOVERNANCE_MANAGED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "policy/perm_types.h"

/* The system-wide managed settings file. */
#ifndef LOOM_MANAGED_SETTINGS_FILE
#define LOOM_MANAGED_SETTINGS_FILE "/etc/loom/managed-settings.json"
#endif

typedef struct mode_disables {
    char *bypass_by; /* where bypassPermissions (and fullAccess) was switched off; NULL: not */
    char *auto_by;   /* where auto was */
} mode_disables;

/* Reads the managed files and the three settings documents (borrowed, may
 * be NULL; named user, project, local in messages). A managed file that
 * cannot be read or parsed, or a disable key with a value other than
 * "disable", is an error naming the file and key: an administrator's limit
 * never silently falls away. 0, or -1 with err set. */
int mode_disables_load(const json_t *user, const json_t *project, const json_t *local,
                       mode_disables *out, loom_error *err);
void mode_disables_free(mode_disables *d);
/* m may be used: true, or false with why ("bypassPermissions mode is
 * disabled by …") filled. */
bool mode_disables_allow(const mode_disables *d, perm_mode m, char *why, size_t cap);

#endif
