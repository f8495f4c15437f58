/* risk_args.h — a simple command's options and operands, read the way
 * GNU getopt reads them (clustered short options, a value glued on or in
 * the next word, unambiguous prefixes of long options, "--" ending the
 * options); private to the risk module (risk_writes.c, risk_unknown.c).
 * Nothing is allocated: the strings point into the command's words.
 */
#ifndef LOOM_POLICY_RISK_ARGS_H
#define LOOM_POLICY_RISK_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "shell/bash_parse.h"

/* More words than this in one command are not looked at one by one (the
 * command is then an unknown writer: fail closed). */
#define RISK_ARGS_MAX 256

typedef void (*risk_emit_fn)(void *ctx, const char *path);

typedef struct risk_argspec {
    const char *short_val;          /* short options taking a value */
    const char *short_tail;         /* short options whose value, if any, is
                                       the rest of the word (sed -i.bak) */
    const char *const *long_val;    /* long options (no "--") taking a value */
} risk_argspec;

typedef struct risk_opt_seen {
    char s;            /* short letter, or 0 */
    const char *l;     /* long name (points into the word), or NULL */
    size_t llen;
    const char *v;     /* value, or NULL */
} risk_opt_seen;

typedef struct risk_args {
    const char *ops[RISK_ARGS_MAX];
    size_t nops;
    risk_opt_seen opt[RISK_ARGS_MAX];
    size_t nopt;
} risk_args;

/* Is the long option as written (name, len: a prefix of at least two
 * letters, as GNU getopt takes) a spelling of full? */
bool risk_long_is(const char *name, size_t len, const char *full);
/* Does the long option (name, len) take a value by sp? */
bool risk_long_takes_value(const risk_argspec *sp, const char *name, size_t len);
/* Reads c's words from index `from` on into a. */
void risk_scan_args(const bash_cmd *c, size_t from, const risk_argspec *sp, risk_args *a);
/* Does option (short s or long full) occur? */
bool risk_opt_has(const risk_args *a, char s, const char *full);
/* Calls emit for the value of every occurrence of the option. */
void risk_opt_values(const risk_args *a, char s, const char *full, risk_emit_fn emit, void *ctx);
/* The value of the option's last occurrence, or NULL. */
const char *risk_opt_last(const risk_args *a, char s, const char *full);

#endif
