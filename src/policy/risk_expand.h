/* risk_expand.h — brace expansion of a parsed simple command, shared by the
 * risk rules (risk.c) and the write-target rules (risk_writes.c); private
 * to the risk module.
 *
 * The shell expands {a,b} and {1..3} before anything else and without
 * looking at the disk, so the rules can do the same on the words: "rm -rf
 * /{,}" is "rm -rf /" and "cp x {.env,}" is "cp x .env". Only words the
 * parser flagged BASH_WORD_GLOB are touched (a quoted brace stays). Not
 * thread-shared: each expansion is owned by its caller.
 */
#ifndef LOOM_POLICY_RISK_EXPAND_H
#define LOOM_POLICY_RISK_EXPAND_H

#include <stddef.h>

#include "shell/bash_parse.h"

typedef struct risk_expanded {
    bash_cmd cmd;   /* the command with its argv expanded (else c itself) */
    char **words;
    size_t nwords, cap;
    const char **argv;
    unsigned *flags;
} risk_expanded;

/* x->cmd is c with its words brace-expanded (c itself when none has an
 * unquoted brace); free with risk_expanded_free. */
void risk_expand_cmd(const bash_cmd *c, risk_expanded *x);
void risk_expanded_free(risk_expanded *x);

/* A growable list of owned words. */
typedef struct risk_words {
    char **v;
    size_t n, cap;
} risk_words;

/* Appends the words w expands to (w itself when it is not a BASH_WORD_GLOB
 * word with a brace, or expands to too many words). */
void risk_expand_word(const char *w, unsigned flags, risk_words *out);
void risk_words_free(risk_words *l);

#endif
