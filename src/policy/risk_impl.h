/* risk_impl.h — what the rule files of the risk classifier share (risk.c,
 * risk_git.c): raising a verdict and reading options. Private to
 * policy/risk*.c; reentrant.
 */
#ifndef LOOM_POLICY_RISK_IMPL_H
#define LOOM_POLICY_RISK_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/risk.h"
#include "shell/bash_parse.h"

/* Keeps the most severe verdict; among equals the first, except that an
 * UNKNOWN with advice beats a bare UNKNOWN. */
void risk_raise(risk_verdict *v, risk_level l, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Is s one of the NULL-ended set? */
bool risk_one_of(const char *s, const char *const *set);
/* A short option letter anywhere in a "-abc" cluster, or a long option
 * (exact, or followed by '='), before a "--". */
bool risk_has_opt(const bash_cmd *c, size_t from, char letter, const char *longopt);
/* Is the long option a (possibly abbreviated, five characters or more
 * with the dashes) spelling of full? */
bool risk_long_spells(const char *a, const char *full);

/* The git rules (risk_git.c); *safe tells whether the command is plainly
 * read-only. */
void risk_rule_git(const bash_cmd *c, risk_verdict *v, bool *safe);

#endif
