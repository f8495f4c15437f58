/* perm_types.c — names of the permission vocabulary. */
#include "policy/perm_types.h"

#include <string.h>

static const char *const mode_names[] = {"default", "acceptEdits", "plan", "auto", "dontAsk",
                                         "bypassPermissions", "fullAccess", "delegate"};

const char *perm_verdict_name(perm_verdict v)
{
    switch (v) {
    case PERM_ALLOW: return "allow";
    case PERM_ASK: return "ask";
    case PERM_DENY: return "deny";
    case PERM_NONE: break;
    }
    return "none";
}

const char *perm_mode_name(perm_mode m)
{
    return (unsigned)m < sizeof mode_names / sizeof mode_names[0] ? mode_names[m] : "default";
}

int perm_mode_parse(const char *name, perm_mode *out)
{
    for (unsigned i = 0; name && i < sizeof mode_names / sizeof mode_names[0]; i++)
        if (!strcmp(name, mode_names[i])) {
            *out = (perm_mode)i;
            return 0;
        }
    return -1;
}

const char *rule_source_name(rule_source s)
{
    switch (s) {
    case RULE_SRC_USER: return "user";
    case RULE_SRC_PROJECT: return "project";
    case RULE_SRC_LOCAL: return "local";
    case RULE_SRC_CLI: return "cli";
    }
    return "unknown";
}

const char *risk_level_name(risk_level l)
{
    switch (l) {
    case RISK_SAFE: return "safe";
    case RISK_UNKNOWN: return "unknown";
    case RISK_CONFIRM: return "confirm";
    case RISK_FORBIDDEN: return "forbidden";
    }
    return "unknown";
}
