/* bash_parse.h — splits a shell command line into the simple commands it
 * would run, for permission checks and the risk classifier.
 *
 * This is not a shell: nothing is expanded or executed. It is sound for
 * permission purposes in one direction only: every simple command bash could
 * run from the text is reported (commands inside subshells, brace groups,
 * if/while/for/case bodies, function bodies, $( ), backticks, <( ), and the
 * commands that wrappers such as sudo, env, timeout, xargs, find -exec,
 * sh -c and eval run). Where the parser cannot be sure of that — unbalanced
 * quotes or parentheses, a here-document it cannot follow, eval, process
 * substitution, a command name that is itself an expansion, nesting past
 * BASH_PARSE_MAX_DEPTH — the result is marked *uncertain* and callers must
 * not grant anything on the strength of it (they fall back to asking).
 *
 * Words have their quotes removed and escapes applied; expansions are kept
 * as written ("$HOME", "$(date)", "*.c") and flagged, so `rm -rf "$HOME"`
 * reads as argv {"rm", "-rf", "$HOME"}.
 */
#ifndef LOOM_SHELL_BASH_PARSE_H
#define LOOM_SHELL_BASH_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* Nesting of (), { }, $( ), ``, quotes inside ${ }, sh -c, eval … beyond
 * this makes the parse uncertain; it also bounds the parser's recursion. */
#define BASH_PARSE_MAX_DEPTH 48
/* More simple commands than this in one line: uncertain, parsing stops. */
#define BASH_PARSE_MAX_CMDS 4096

/* Word flags (argv_flags[i], bash_redir.target_flags). */
enum {
    BASH_WORD_QUOTED = 1u << 0,  /* some part was quoted or escaped */
    BASH_WORD_EXPANDS = 1u << 1, /* holds $var, ${…}, $( ), `…` or $(( )) */
    BASH_WORD_GLOB = 1u << 2,    /* unquoted * ? [ or {a,b}: the shell may
                                    turn it into other / several words */
    BASH_WORD_TILDE = 1u << 3,   /* starts with an unquoted ~ */
};

typedef enum {
    BASH_REDIR_IN,         /* < file */
    BASH_REDIR_OUT,        /* > file, >| file */
    BASH_REDIR_APPEND,     /* >> file */
    BASH_REDIR_INOUT,      /* <> file (opens for writing too) */
    BASH_REDIR_OUT_ALL,    /* &> file, >& file: stdout and stderr */
    BASH_REDIR_APPEND_ALL, /* &>> file */
    BASH_REDIR_DUP,        /* N>&M, N<&M, N>&-: no file involved */
    BASH_REDIR_HEREDOC,    /* << DELIM, <<- DELIM: target is the delimiter */
    BASH_REDIR_HERESTRING, /* <<< word: target is the word */
} bash_redir_kind;

typedef struct bash_redir {
    bash_redir_kind kind;
    int fd;               /* the descriptor written on the left, -1 if none */
    const char *target;   /* path, descriptor, delimiter or word; quotes removed */
    unsigned target_flags; /* BASH_WORD_* */
} bash_redir;

/* Command flags. */
enum {
    BASH_CMD_PIPE_IN = 1u << 0,     /* reads a pipe from an earlier command */
    BASH_CMD_PIPE_OUT = 1u << 1,    /* writes into a pipe */
    BASH_CMD_BACKGROUND = 1u << 2,  /* part of a pipeline ended by & */
    BASH_CMD_SUBST = 1u << 3,       /* inside $( ), `…` or <( ) / >( ) */
    BASH_CMD_DERIVED = 1u << 4,     /* taken from the arguments of `parent`
                                       (sudo X, env X, find -exec X, sh -c X…) */
    BASH_CMD_TRANSPARENT = 1u << 5, /* DERIVED through a wrapper that runs it
                                       unchanged: nice, nohup, time, timeout,
                                       stdbuf, command, builtin, exec, setsid,
                                       plain env */
    BASH_CMD_FUNCTION = 1u << 6,    /* in the body of a function definition */
    BASH_CMD_MORE_ARGS = 1u << 7,   /* DERIVED, and the wrapper adds words at
                                       run time that the text does not show
                                       (xargs appends what it reads) */
};

typedef struct bash_cmd {
    size_t argc;
    const char *const *argv;      /* argv[argc] == NULL; argc may be 0 (only
                                     assignments and/or redirections, or the
                                     redirections of a compound command) */
    const unsigned *argv_flags;   /* BASH_WORD_* per word */
    size_t nassign;
    const char *const *assign;    /* leading "NAME=value" words */
    size_t nredir;
    const bash_redir *redir;
    unsigned flags;               /* BASH_CMD_* */
    unsigned depth;               /* 0 at top level */
    unsigned pipeline;            /* id shared by the commands of one pipeline */
    unsigned pipe_pos;            /* position in that pipeline, 0 = first */
    long parent;                  /* index of the command this was derived
                                     from, -1 if none */
    const char *function;         /* name of the function defined around it */
} bash_cmd;

typedef struct bash_cmds bash_cmds;

/* Parses cmd (NULL reads as an empty, uncertain command). Never NULL; the
 * result and every string reachable from it belong to it: bash_cmds_free. */
bash_cmds *bash_parse(const char *cmd);
/* The same over len bytes; an embedded NUL ends the text and makes the
 * parse uncertain (bash -c would never see what follows it). */
bash_cmds *bash_parse_n(const char *cmd, size_t len);

size_t bash_cmds_count(const bash_cmds *c);
/* The i-th simple command in the order the parser met them (a command
 * substitution comes before the command whose word holds it). */
const bash_cmd *bash_cmds_at(const bash_cmds *c, size_t i);
bool bash_cmds_uncertain(const bash_cmds *c);
/* Why the parse is uncertain (the first reason met), or NULL. */
const char *bash_cmds_why(const bash_cmds *c);
void bash_cmds_free(bash_cmds *c);

/* True for redirections that open their target for writing. */
bool bash_redir_writes(const bash_redir *r);
/* True for redirections that read a file (< and <>). */
bool bash_redir_reads(const bash_redir *r);
/* The command as one line (assignments, then argv; words with blanks or
 * shell characters single-quoted) for messages. Caller frees. */
char *bash_cmd_text(const bash_cmd *cmd);
/* argv[0] without its directory ("rm" for "/bin/rm"), "" when argc is 0. */
const char *bash_cmd_name(const bash_cmd *cmd);

#endif
