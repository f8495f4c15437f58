/* perm_types.h — the vocabulary of permission decisions shared by rules,
 * modes, hooks, the risk classifier, the decision table and the audit log. */
#ifndef LOOM_POLICY_PERM_TYPES_H
#define LOOM_POLICY_PERM_TYPES_H

#include <stdbool.h>

/* What one source says about a call. NONE: it has no opinion. */
typedef enum { PERM_NONE = 0, PERM_ALLOW, PERM_ASK, PERM_DENY } perm_verdict;

/* seed 001 §14.1: the eight permission modes. */
typedef enum {
    MODE_DEFAULT,
    MODE_ACCEPT_EDITS,
    MODE_PLAN,
    MODE_AUTO,
    MODE_DONT_ASK,
    MODE_BYPASS,        /* bypassPermissions */
    MODE_FULL_ACCESS,
    MODE_DELEGATE,
} perm_mode;

/* Where a rule came from, lowest precedence first (docs/permissions.md). */
typedef enum { RULE_SRC_USER, RULE_SRC_PROJECT, RULE_SRC_LOCAL, RULE_SRC_CLI } rule_source;

/* The settings rule that decided, if any. */
typedef struct rule_match {
    perm_verdict verdict;   /* NONE when no rule matched */
    char rule[256];         /* the rule's text, e.g. "Bash(git push:*)" */
    rule_source source;
} rule_match;

/* Risk classifier levels (seed 000 §12). */
typedef enum {
    RISK_SAFE,       /* known harmless (read-only commands) */
    RISK_UNKNOWN,    /* no rule says anything */
    RISK_CONFIRM,    /* destructive or irreversible: a person should confirm */
    RISK_FORBIDDEN,  /* never, whatever mode (rm -rf /, fork bomb, …) */
} risk_level;

typedef struct risk_verdict {
    risk_level level;
    char rule_id[64];       /* which rule fired, e.g. "git.push_force" */
    char reason[256];       /* for the model and the audit log */
} risk_verdict;

const char *perm_verdict_name(perm_verdict v);
const char *perm_mode_name(perm_mode m);
/* Parses "default", "acceptEdits", …; -1 when unknown. */
int perm_mode_parse(const char *name, perm_mode *out);
const char *rule_source_name(rule_source s);
const char *risk_level_name(risk_level l);

#endif
