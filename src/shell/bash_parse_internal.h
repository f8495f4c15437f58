/* bash_parse_internal.h — what the parser (bash_parse.c) shares with the
 * wrapper unwrapping (bash_wrappers.c, bash_runners.c); private to those
 * three files.
 *
 * The parser records each simple command with bp_emit and hands it to
 * bp_derive, which looks for commands that run their arguments (sudo X,
 * sh -c 'X', xargs X; in bash_runners.c git rebase --exec X, npm exec X,
 * …) and records what they run, with bp_emit again or by parsing a script
 * with bp_sub_parse. Both sides
 * work on the same parser state and the same bash_cmds, so its layout
 * lives here rather than in bash_parse.h.
 *
 * Threading: a parse runs on one thread; nothing here is shared between
 * parses.
 */
#ifndef LOOM_SHELL_BASH_PARSE_INTERNAL_H
#define LOOM_SHELL_BASH_PARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/str.h"
#include "shell/bash_parse.h"

/* The result of a parse: the commands in the order met, all in mem. */
struct bash_cmds {
    arena mem;
    bash_cmd *cmds;
    size_t n, cap;
    bool uncertain;
    bool aborted;     /* parsing stopped early (limits): the list is partial */
    char why[128];
    unsigned next_pipeline;
};

enum tok_kind { TK_EOF, TK_WORD, TK_NEWLINE, TK_OP, TK_REDIR };

typedef struct token {
    enum tok_kind kind;
    int op;            /* TK_OP */
    char *text;        /* TK_WORD, in the arena */
    unsigned wflags;   /* TK_WORD */
    bool assign;       /* TK_WORD: NAME=… with unquoted NAME and = */
    int rkind;         /* TK_REDIR: bash_redir_kind or R_DUP_* */
    int fd;            /* TK_REDIR */
    bool strip_tabs;   /* TK_REDIR: <<- */
} token;

typedef struct heredoc {
    const char *delim;
    bool quoted;   /* the body is taken literally */
    bool strip;    /* <<-: leading tabs do not count */
} heredoc;

typedef struct parser {
    bash_cmds *out;
    const char *s;
    size_t n, i;
    unsigned depth;        /* recursion level, checked against the limit */
    unsigned nest;         /* nesting of command lists, reported as depth */
    const char *func;      /* function whose body is being read */
    unsigned pipeline, pipe_pos;
    bool subst;            /* commands met now run inside a substitution */
    bool cond;             /* inside [[ … ]] */
    token back;
    bool has_back;
    size_t consumed;       /* tokens taken minus tokens pushed back */
    heredoc *hd;
    size_t nhd, caphd;
} parser;

/* A growable array of pointers / flags, copied into the arena at the end. */
typedef struct vec {
    void **p;
    unsigned *f;
    size_t n, cap;
} vec;

static inline void bp_vec_push(vec *v, void *ptr, unsigned flags)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->p = xrealloc(v->p, v->cap * sizeof *v->p);
        v->f = xrealloc(v->f, v->cap * sizeof *v->f);
    }
    v->p[v->n] = ptr;
    v->f[v->n++] = flags;
}

static inline void bp_vec_free(vec *v)
{
    free(v->p);
    free(v->f);
    memset(v, 0, sizeof *v);
}

/* Marks the parse uncertain; the first reason given is the one kept. */
void bp_uncertain(parser *p, const char *why);

/* True when v[0, n) is NAME, NAME[…] or NAME+ (what precedes = in an
 * assignment word). */
bool bp_assign_prefix(const char *v, size_t n);

/* Parses text as a command list of its own (backticks, sh -c, eval):
 * its commands are recorded with the current context; with parent >= 0
 * they are marked as derived from that command. */
void bp_sub_parse(parser *p, const char *text, size_t len, bool subst, long parent);

/* Copies the collected parts into the arena and appends a command. Returns
 * its index, or -1 when the command limit stopped the parse. */
long bp_emit(parser *p, const vec *argv, const vec *assign, bash_redir *redir, size_t nredir,
             unsigned flags);

/* bash_wrappers.c: appends a command derived from argv[from, to) of
 * cmds[idx] (with the assignments in assign, if any) and unwraps it
 * further; transparent marks it as running just as it would alone. */
void bp_emit_derived(parser *p, size_t idx, size_t from, size_t to, const vec *assign,
                     bool transparent, unsigned level);

/* bash_wrappers.c: cmds[idx] (or the command it was derived from: `sudo
 * bash <<< …`) reads its script from standard input: a here-string is
 * parsed as a script of its own; a here-document or a pipe is not
 * followed, hence uncertain (what says why). A redirected file counts as a
 * script file, the same as `bash FILE`. */
void bp_derive_stdin_script(parser *p, size_t idx, const char *what);

/* bash_wrappers.c: parses word k of c (cmds[idx]) as a script of its own,
 * derived from c. */
void bp_derive_script(parser *p, const bash_cmd *c, size_t idx, size_t k);

/* bash_runners.c: subcommands that run a command given in their arguments
 * (npm exec CMD, git rebase --exec CMD, tmux new-window, at, …). True when
 * c (a copy of cmds[idx], named name) was one of them and nothing else
 * needs to look at it. */
bool bp_derive_runner(parser *p, const bash_cmd *c, size_t idx, const char *name,
                      unsigned level);

/* bash_wrappers.c: records the commands cmds[idx] runs through its
 * arguments (sudo X, sh -c 'X', find -exec X, …), each derived from it;
 * level counts the wrappers already unwrapped above it. */
void bp_derive(parser *p, size_t idx, unsigned level);

#endif
