/* bash_parse.c — the shell-command splitter behind Bash permission rules and
 * the risk classifier (bash_parse.h says what it promises).
 *
 * A recursive-descent reader working straight on the characters: the lexer
 * and the parser call each other, because finding the end of `$( … )` needs
 * the full grammar (a `)` inside quotes or a case pattern does not close
 * it). Structure is kept only as far as it decides which simple commands
 * run; if/while/for bodies are read as plain lists with a keyword stack
 * that only checks balance. Whenever the text could mean something the
 * parser does not follow, it says "uncertain" rather than guess: a caller
 * may deny or ask on an uncertain parse, never allow.
 *
 * Everything the result holds lives in one arena owned by the bash_cmds.
 */
#include "shell/bash_parse.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/arena.h"
#include "base/str.h"

/* sudo sudo env nice X: each wrapper level is one derived command; past
 * this many the rest is not unwrapped and the parse is uncertain. */
#define DERIVE_MAX 8
/* if/while/for/case nesting inside one list. */
#define KEYWORD_MAX 64

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
enum {
    OP_AND = 1, OP_OR, OP_SEMI, OP_DSEMI, OP_SEMI_AMP, OP_DSEMI_AMP,
    OP_PIPE, OP_PIPE_AMP, OP_AMP, OP_LPAREN, OP_RPAREN
};
/* Redirection operators before their target tells them apart. */
enum { R_DUP_IN = 100, R_DUP_OUT };

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

typedef enum { STOP_EOF, STOP_RPAREN, STOP_RBRACE, STOP_CASE } stop_at;

/* A growable array of pointers / flags, copied into the arena at the end. */
typedef struct vec {
    void **p;
    unsigned *f;
    size_t n, cap;
} vec;

static void vec_push(vec *v, void *ptr, unsigned flags)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->p = xrealloc(v->p, v->cap * sizeof *v->p);
        v->f = xrealloc(v->f, v->cap * sizeof *v->f);
    }
    v->p[v->n] = ptr;
    v->f[v->n++] = flags;
}

static void vec_free(vec *v)
{
    free(v->p);
    free(v->f);
    memset(v, 0, sizeof *v);
}

static void parse_list(parser *p, stop_at stop);
static void next(parser *p, token *t);
static void lex_dollar(parser *p, loom_str *v, unsigned *fl, bool in_dq);
static void lex_backtick(parser *p, loom_str *v, unsigned *fl);
static void lex_dquote(parser *p, loom_str *v, unsigned *fl);
static void derive(parser *p, size_t idx, unsigned level);

/* ---- bookkeeping ------------------------------------------------------ */

static void set_uncertain(bash_cmds *out, const char *why)
{
    if (!out->uncertain)
        snprintf(out->why, sizeof out->why, "%s", why);
    out->uncertain = true;
}

static void uncertain(parser *p, const char *why)
{
    set_uncertain(p->out, why);
}

/* Stops the whole parse: what was found so far stays, marked uncertain. */
static void abort_parse(parser *p, const char *why)
{
    uncertain(p, why);
    p->out->aborted = true;
}

static bool enter(parser *p)
{
    if (p->out->aborted)
        return false;
    if (p->depth >= BASH_PARSE_MAX_DEPTH) {
        abort_parse(p, "nesting too deep");
        return false;
    }
    p->depth++;
    return true;
}

static void leave(parser *p)
{
    p->depth--;
}

static char peek(const parser *p, size_t k)
{
    return p->i + k < p->n ? p->s[p->i + k] : '\0';
}

static char *dup_str(parser *p, const char *s, size_t n)
{
    return arena_strndup(&p->out->mem, s, n);
}

/* ---- the lexer ------------------------------------------------------- */

static bool is_meta(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
           c == '(' || c == ')' || c == '<' || c == '>';
}

static bool is_name_start(char c)
{
    return isalpha((unsigned char)c) || c == '_';
}

static bool is_name_char(char c)
{
    return isalnum((unsigned char)c) || c == '_';
}

/* "NAME=", "NAME+=", "NAME[sub]=" — v ends just before the '='. */
static bool assign_prefix(const char *v, size_t n)
{
    if (n == 0 || !is_name_start(v[0]))
        return false;
    size_t i = 1;
    while (i < n && is_name_char(v[i]))
        i++;
    if (i < n && v[i] == '[') {
        const char *close = memchr(v + i, ']', n - i);
        if (!close)
            return false;
        i = (size_t)(close - v) + 1;
    }
    if (i < n && v[i] == '+')
        i++;
    return i == n;
}

static void skip_blanks(parser *p)
{
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == ' ' || c == '\t')
            p->i++;
        else if (c == '\\' && peek(p, 1) == '\n')
            p->i += 2;
        else
            break;
    }
}

/* Reads the bodies of the here-documents announced on the line that just
 * ended. An unquoted body is expanded by the shell, so a command
 * substitution in it would run: not followed, hence uncertain. */
static void read_heredocs(parser *p)
{
    for (size_t k = 0; k < p->nhd; k++) {
        const heredoc *h = &p->hd[k];
        size_t dl = strlen(h->delim);
        bool found = false;
        while (p->i < p->n) {
            const char *line = p->s + p->i;
            const char *nl = memchr(line, '\n', p->n - p->i);
            size_t len = nl ? (size_t)(nl - line) : p->n - p->i;
            size_t at = 0;
            if (h->strip)
                while (at < len && line[at] == '\t')
                    at++;
            p->i += len + (nl ? 1 : 0);
            if (len - at == dl && memcmp(line + at, h->delim, dl) == 0) {
                found = true;
                break;
            }
            if (!h->quoted) {
                for (size_t j = 0; j < len; j++)
                    if (line[j] == '`' || (line[j] == '$' && j + 1 < len && line[j + 1] == '(')) {
                        uncertain(p, "command substitution in a here-document");
                        break;
                    }
            }
        }
        if (!found)
            uncertain(p, "here-document without its terminator");
    }
    p->nhd = 0;
}

/* Parses text as a command list of its own (backticks, sh -c, eval):
 * its commands are recorded with the current context; with parent >= 0
 * they are marked as derived from that command. */
static void sub_parse(parser *p, const char *text, size_t len, bool subst, long parent)
{
    if (!enter(p))
        return;
    parser q = {0};
    q.out = p->out;
    q.s = dup_str(p, text, len);
    q.n = len;
    q.depth = p->depth;
    q.nest = p->nest + 1;
    q.func = p->func;
    q.subst = p->subst || subst;
    size_t start = p->out->n;
    parse_list(&q, STOP_EOF);
    if (q.nhd)
        uncertain(p, "here-document without a body");
    free(q.hd);
    if (parent >= 0)
        for (size_t k = start; k < p->out->n; k++)
            if (p->out->cmds[k].parent < 0) {
                p->out->cmds[k].parent = parent;
                p->out->cmds[k].flags |= BASH_CMD_DERIVED;
            }
    leave(p);
}

/* $( … ) or <( … ): the list up to the matching ')'. p->i is just past
 * the '('. */
static void sub_list(parser *p)
{
    if (!enter(p))
        return;
    bool subst = p->subst;
    unsigned pl = p->pipeline, pp = p->pipe_pos, nest = p->nest;
    bool cond = p->cond;
    p->subst = true;
    p->cond = false;
    p->nest++;
    parse_list(p, STOP_RPAREN);
    p->subst = subst;
    p->pipeline = pl;
    p->pipe_pos = pp;
    p->nest = nest;
    p->cond = cond;
    leave(p);
}

/* Arithmetic: p->i is just past "((" (of "$((" or a "((" command). Ends at
 * the "))" that closes it. Returns false when the parentheses close some
 * other way, meaning the text was not arithmetic after all (`$((a) )` is a
 * substitution of a subshell); p->i is then unchanged. */
static bool scan_arith(parser *p)
{
    size_t j = p->i;
    int depth = 2;
    while (j < p->n) {
        char c = p->s[j];
        if (c == '(') {
            depth++;
        } else if (c == ')') {
            depth--;
            if (depth == 1) {
                if (j + 1 < p->n && p->s[j + 1] == ')') {
                    p->i = j + 2;
                    return true;
                }
                return false;
            }
        } else if (c == '`' || (c == '$' && j + 1 < p->n && p->s[j + 1] == '(' &&
                                !(j + 2 < p->n && p->s[j + 2] == '('))) {
            uncertain(p, "command substitution inside arithmetic");
        } else if (c == '\\' && j + 1 < p->n) {
            j++;
        }
        j++;
    }
    uncertain(p, "unterminated (( ))");
    p->i = p->n;
    return true;
}

/* ${ … }: p->i is at '$'. Scans to the matching '}', following quotes and
 * substitutions inside (a $( ) in a default value still runs). */
static void scan_brace_param(parser *p)
{
    if (!enter(p))
        return;
    p->i += 2;
    int depth = 1;
    loom_str scratch = LOOM_STR_INIT;
    unsigned fl = 0;
    while (p->i < p->n && !p->out->aborted) {
        char c = p->s[p->i];
        if (c == '}') {
            p->i++;
            if (--depth == 0)
                break;
        } else if (c == '\\') {
            p->i += p->i + 1 < p->n ? 2 : 1;
        } else if (c == '\'') {
            const char *q = memchr(p->s + p->i + 1, '\'', p->n - p->i - 1);
            if (!q) {
                uncertain(p, "unterminated ' inside ${ }");
                p->i = p->n;
            } else {
                p->i = (size_t)(q - p->s) + 1;
            }
        } else if (c == '"') {
            lex_dquote(p, &scratch, &fl);
        } else if (c == '`') {
            lex_backtick(p, &scratch, &fl);
        } else if (c == '$' && peek(p, 1) == '{') {
            depth++;
            p->i += 2;
        } else if (c == '$') {
            lex_dollar(p, &scratch, &fl, true);
        } else {
            p->i++;
        }
        str_clear(&scratch);
    }
    if (depth > 0)
        uncertain(p, "unterminated ${");
    str_free(&scratch);
    leave(p);
}

/* $'…' with its C escapes; p->i is at the '$'. */
static void lex_ansi_c(parser *p, loom_str *v)
{
    p->i += 2;
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == '\'') {
            p->i++;
            return;
        }
        if (c != '\\' || p->i + 1 >= p->n) {
            str_putc(v, c);
            p->i++;
            continue;
        }
        char e = p->s[p->i + 1];
        p->i += 2;
        switch (e) {
        case 'n': str_putc(v, '\n'); break;
        case 't': str_putc(v, '\t'); break;
        case 'r': str_putc(v, '\r'); break;
        case 'a': str_putc(v, '\a'); break;
        case 'b': str_putc(v, '\b'); break;
        case 'e': case 'E': str_putc(v, 27); break;
        case 'f': str_putc(v, '\f'); break;
        case 'v': str_putc(v, '\v'); break;
        case 'c':
            if (p->i < p->n)
                str_putc(v, (char)(p->s[p->i++] & 0x1f));
            break;
        case 'x': case 'u': case 'U': {
            unsigned max = e == 'x' ? 2 : e == 'u' ? 4 : 8, val = 0, k = 0;
            while (k < max && p->i < p->n && isxdigit((unsigned char)p->s[p->i])) {
                char h = p->s[p->i++];
                val = val * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower((unsigned char)h) - 'a' + 10));
                k++;
            }
            if (k == 0) {
                str_putc(v, '\\');
                str_putc(v, e);
            } else if (e == 'x' || val < 0x80) {
                str_putc(v, (char)val);
            } else {
                /* Only matters for matching; a code point becomes UTF-8. */
                if (val > 0x10FFFF)
                    val = 0xFFFD;
                char b[4];
                size_t bl;
                if (val < 0x800) {
                    b[0] = (char)(0xC0 | (val >> 6));
                    b[1] = (char)(0x80 | (val & 0x3F));
                    bl = 2;
                } else if (val < 0x10000) {
                    b[0] = (char)(0xE0 | (val >> 12));
                    b[1] = (char)(0x80 | ((val >> 6) & 0x3F));
                    b[2] = (char)(0x80 | (val & 0x3F));
                    bl = 3;
                } else {
                    b[0] = (char)(0xF0 | (val >> 18));
                    b[1] = (char)(0x80 | ((val >> 12) & 0x3F));
                    b[2] = (char)(0x80 | ((val >> 6) & 0x3F));
                    b[3] = (char)(0x80 | (val & 0x3F));
                    bl = 4;
                }
                str_append(v, b, bl);
            }
            break;
        }
        default:
            if (e >= '0' && e <= '7') {
                unsigned val = (unsigned)(e - '0'), k = 1;
                while (k < 3 && p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '7') {
                    val = val * 8 + (unsigned)(p->s[p->i++] - '0');
                    k++;
                }
                str_putc(v, (char)val);
            } else if (e == '\\' || e == '\'' || e == '"' || e == '?') {
                str_putc(v, e);
            } else {
                str_putc(v, '\\');
                str_putc(v, e);
            }
        }
    }
    uncertain(p, "unterminated $'");
}

/* A '$' at p->i. Appends what the word holds there: the expansion as
 * written, or the decoded text of $'…' and $"…". */
static void lex_dollar(parser *p, loom_str *v, unsigned *fl, bool in_dq)
{
    char c1 = peek(p, 1);
    size_t st = p->i;
    if (!in_dq && c1 == '\'') {
        lex_ansi_c(p, v);
        *fl |= BASH_WORD_QUOTED;
        return;
    }
    if (!in_dq && c1 == '"') {
        p->i++;
        lex_dquote(p, v, fl);
        return;
    }
    if (c1 == '(') {
        if (peek(p, 2) == '(') {
            size_t save = p->i;
            p->i += 3;
            if (scan_arith(p)) {
                str_append(v, p->s + st, p->i - st);
                *fl |= BASH_WORD_EXPANDS;
                return;
            }
            p->i = save;
        }
        p->i += 2;
        sub_list(p);
        str_append(v, p->s + st, p->i - st);
        *fl |= BASH_WORD_EXPANDS;
        return;
    }
    if (c1 == '{') {
        scan_brace_param(p);
        str_append(v, p->s + st, p->i - st);
        *fl |= BASH_WORD_EXPANDS;
        return;
    }
    if (is_name_start(c1)) {
        p->i += 2;
        while (p->i < p->n && is_name_char(p->s[p->i]))
            p->i++;
        str_append(v, p->s + st, p->i - st);
        *fl |= BASH_WORD_EXPANDS;
        return;
    }
    if (c1 && (isdigit((unsigned char)c1) || strchr("@*#?$!-", c1))) {
        p->i += 2;
        str_append(v, p->s + st, 2);
        *fl |= BASH_WORD_EXPANDS;
        return;
    }
    str_putc(v, '$');
    p->i++;
    return;
}

/* `…`: p->i at the opening backtick. The body, with \` \\ \$ unescaped, is
 * a command list of its own. */
static void lex_backtick(parser *p, loom_str *v, unsigned *fl)
{
    size_t st = p->i++;
    loom_str body = LOOM_STR_INIT;
    bool closed = false;
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == '`') {
            p->i++;
            closed = true;
            break;
        }
        if (c == '\\' && p->i + 1 < p->n) {
            char e = p->s[p->i + 1];
            if (e != '`' && e != '\\' && e != '$')
                str_putc(&body, '\\');
            str_putc(&body, e);
            p->i += 2;
            continue;
        }
        str_putc(&body, c);
        p->i++;
    }
    if (!closed)
        uncertain(p, "unterminated `");
    sub_parse(p, str_cstr(&body), body.len, true, -1);
    str_free(&body);
    str_append(v, p->s + st, p->i - st);
    *fl |= BASH_WORD_EXPANDS;
}

/* "…": p->i at the opening quote. */
static void lex_dquote(parser *p, loom_str *v, unsigned *fl)
{
    if (!enter(p))
        return;
    p->i++;
    *fl |= BASH_WORD_QUOTED;
    while (p->i < p->n && !p->out->aborted) {
        char c = p->s[p->i];
        if (c == '"') {
            p->i++;
            leave(p);
            return;
        }
        if (c == '\\' && p->i + 1 < p->n) {
            char e = p->s[p->i + 1];
            if (e == '\n') {
                p->i += 2;
            } else if (e == '$' || e == '`' || e == '"' || e == '\\') {
                str_putc(v, e);
                p->i += 2;
            } else {
                str_putc(v, '\\');
                p->i++;
            }
        } else if (c == '$') {
            lex_dollar(p, v, fl, true);
        } else if (c == '`') {
            lex_backtick(p, v, fl);
        } else {
            str_putc(v, c);
            p->i++;
        }
    }
    if (!p->out->aborted)
        uncertain(p, "unterminated \"");
    leave(p);
}

/* NAME=( … ): p->i at the '('. Kept as written; a substitution inside is
 * not followed. */
static void lex_array(parser *p, loom_str *v)
{
    size_t st = p->i;
    int depth = 0;
    while (p->i < p->n) {
        char c = p->s[p->i];
        if (c == '\\') {
            p->i += p->i + 1 < p->n ? 2 : 1;
            continue;
        }
        if (c == '\'' || c == '"') {
            const char *q = memchr(p->s + p->i + 1, c, p->n - p->i - 1);
            if (!q) {
                uncertain(p, "unterminated quote in an array");
                p->i = p->n;
                break;
            }
            p->i = (size_t)(q - p->s) + 1;
            continue;
        }
        if (c == '`' || (c == '$' && peek(p, 1) == '('))
            uncertain(p, "command substitution in an array assignment");
        p->i++;
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0)
            break;
    }
    if (depth > 0)
        uncertain(p, "unterminated array assignment");
    str_append(v, p->s + st, p->i - st);
}

/* <( … ) or >( … ): p->i at the '<' or '>'. */
static void lex_procsubst(parser *p, loom_str *v, unsigned *fl)
{
    size_t st = p->i;
    uncertain(p, "process substitution");
    p->i += 2;
    sub_list(p);
    str_append(v, p->s + st, p->i - st);
    *fl |= BASH_WORD_EXPANDS;
}

static void lex_word(parser *p, token *t)
{
    loom_str v = LOOM_STR_INIT;
    unsigned fl = 0;
    size_t start = p->i;
    bool quoted_so_far = false, assign = false, lbrace = false, lbracket = false;
    if (p->s[p->i] == '~')
        fl |= BASH_WORD_TILDE;
    while (p->i < p->n && !p->out->aborted) {
        char c = p->s[p->i];
        if (is_meta(c)) {
            if ((c == '<' || c == '>') && p->i == start && peek(p, 1) == '(') {
                lex_procsubst(p, &v, &fl);
                continue;
            }
            if (c == '(' && assign && v.len && v.ptr[v.len - 1] == '=' &&
                p->s[p->i - 1] == '=') {
                lex_array(p, &v);
                continue;
            }
            break;
        }
        switch (c) {
        case '\\':
            if (p->i + 1 < p->n) {
                if (p->s[p->i + 1] != '\n') {
                    str_putc(&v, p->s[p->i + 1]);
                    fl |= BASH_WORD_QUOTED;
                    quoted_so_far = true;
                }
                p->i += 2;
            } else {
                str_putc(&v, '\\');
                p->i++;
            }
            break;
        case '\'': {
            const char *q = memchr(p->s + p->i + 1, '\'', p->n - p->i - 1);
            size_t end = q ? (size_t)(q - p->s) : p->n;
            str_append(&v, p->s + p->i + 1, end - p->i - 1);
            if (!q)
                uncertain(p, "unterminated '");
            p->i = q ? end + 1 : p->n;
            fl |= BASH_WORD_QUOTED;
            quoted_so_far = true;
            break;
        }
        case '"':
            lex_dquote(p, &v, &fl);
            quoted_so_far = true;
            break;
        case '$':
            if (peek(p, 1) == '\'' || peek(p, 1) == '"')
                quoted_so_far = true;
            lex_dollar(p, &v, &fl, false);
            break;
        case '`':
            lex_backtick(p, &v, &fl);
            break;
        case '=':
            if (!assign && !quoted_so_far && !(fl & BASH_WORD_EXPANDS) && assign_prefix(v.ptr, v.len))
                assign = true;
            str_putc(&v, c);
            p->i++;
            break;
        case '*': case '?':
            fl |= BASH_WORD_GLOB;
            str_putc(&v, c);
            p->i++;
            break;
        case '[': case ']':
            /* A lone "[" (the test command) is no pattern; "[…]" is. */
            if (c == '[')
                lbracket = true;
            else if (lbracket)
                fl |= BASH_WORD_GLOB;
            str_putc(&v, c);
            p->i++;
            break;
        case '{':
            lbrace = true;
            str_putc(&v, c);
            p->i++;
            break;
        case '}':
            if (lbrace)
                fl |= BASH_WORD_GLOB;   /* brace expansion may split the word */
            str_putc(&v, c);
            p->i++;
            break;
        default:
            str_putc(&v, c);
            p->i++;
        }
    }
    t->kind = TK_WORD;
    t->text = dup_str(p, str_cstr(&v), v.len);
    t->wflags = fl;
    t->assign = assign;
    str_free(&v);
}

static void lex_redir(parser *p, token *t, int fd)
{
    t->kind = TK_REDIR;
    t->fd = fd;
    char c = p->s[p->i], c1 = peek(p, 1), c2 = peek(p, 2);
    if (c == '&') { /* &> &>> */
        bool app = c2 == '>';
        t->rkind = app ? BASH_REDIR_APPEND_ALL : BASH_REDIR_OUT_ALL;
        p->i += app ? 3 : 2;
    } else if (c == '<') {
        if (c1 == '<' && c2 == '<') {
            t->rkind = BASH_REDIR_HERESTRING;
            p->i += 3;
        } else if (c1 == '<') {
            t->rkind = BASH_REDIR_HEREDOC;
            t->strip_tabs = c2 == '-';
            p->i += c2 == '-' ? 3 : 2;
        } else if (c1 == '>') {
            t->rkind = BASH_REDIR_INOUT;
            p->i += 2;
        } else if (c1 == '&') {
            t->rkind = R_DUP_IN;
            p->i += 2;
        } else {
            t->rkind = BASH_REDIR_IN;
            p->i += 1;
        }
    } else { /* '>' */
        if (c1 == '>') {
            t->rkind = BASH_REDIR_APPEND;
            p->i += 2;
        } else if (c1 == '|') {
            t->rkind = BASH_REDIR_OUT;
            p->i += 2;
        } else if (c1 == '&') {
            t->rkind = R_DUP_OUT;
            p->i += 2;
        } else {
            t->rkind = BASH_REDIR_OUT;
            p->i += 1;
        }
    }
}

static void op(token *t, int o)
{
    t->kind = TK_OP;
    t->op = o;
}

static void next(parser *p, token *t)
{
    p->consumed++;
    if (p->has_back) {
        *t = p->back;
        p->has_back = false;
        return;
    }
    memset(t, 0, sizeof *t);
    for (;;) {
        if (p->out->aborted) {
            t->kind = TK_EOF;
            return;
        }
        skip_blanks(p);
        if (p->i >= p->n) {
            t->kind = TK_EOF;
            return;
        }
        if (p->s[p->i] == '#') {
            const char *nl = memchr(p->s + p->i, '\n', p->n - p->i);
            p->i = nl ? (size_t)(nl - p->s) : p->n;
            continue;
        }
        break;
    }
    char c = p->s[p->i], c1 = peek(p, 1), c2 = peek(p, 2);
    if (c == '\n') {
        p->i++;
        t->kind = TK_NEWLINE;
        read_heredocs(p);
        return;
    }
    if (p->cond && c && strchr("<>()&|;", c)) {
        /* Inside [[ ]] these are the test's own operators, not the shell's. */
        size_t st = p->i;
        while (p->i < p->n && p->s[p->i] && strchr("<>()&|;", p->s[p->i]))
            p->i++;
        t->kind = TK_WORD;
        t->text = dup_str(p, p->s + st, p->i - st);
        return;
    }
    if ((c == '<' || c == '>') && c1 == '(') {
        lex_word(p, t);
        return;
    }
    if (isdigit((unsigned char)c)) {
        size_t j = p->i;
        while (j < p->n && isdigit((unsigned char)p->s[j]))
            j++;
        if (j < p->n && (p->s[j] == '<' || p->s[j] == '>') &&
            !(j + 1 < p->n && p->s[j + 1] == '(')) {
            long fd = j - p->i > 6 ? 999999 : strtol(p->s + p->i, NULL, 10);
            p->i = j;
            lex_redir(p, t, (int)fd);
            return;
        }
    }
    switch (c) {
    case '<': case '>':
        lex_redir(p, t, -1);
        return;
    case '&':
        if (c1 == '&') {
            p->i += 2;
            op(t, OP_AND);
        } else if (c1 == '>') {
            lex_redir(p, t, -1);
        } else {
            p->i++;
            op(t, OP_AMP);
        }
        return;
    case '|':
        if (c1 == '|' || c1 == '&') {
            p->i += 2;
            op(t, c1 == '|' ? OP_OR : OP_PIPE_AMP);
        } else {
            p->i++;
            op(t, OP_PIPE);
        }
        return;
    case ';':
        if (c1 == ';' && c2 == '&') {
            p->i += 3;
            op(t, OP_DSEMI_AMP);
        } else if (c1 == ';') {
            p->i += 2;
            op(t, OP_DSEMI);
        } else if (c1 == '&') {
            p->i += 2;
            op(t, OP_SEMI_AMP);
        } else {
            p->i++;
            op(t, OP_SEMI);
        }
        return;
    case '(':
        p->i++;
        op(t, OP_LPAREN);
        return;
    case ')':
        p->i++;
        op(t, OP_RPAREN);
        return;
    }
    lex_word(p, t);
}

static void pushback(parser *p, const token *t)
{
    p->back = *t;
    p->has_back = true;
    p->consumed--;
}

/* ---- building commands ----------------------------------------------- */

static bool word_is(const token *t, const char *kw)
{
    return t->kind == TK_WORD && !(t->wflags & (BASH_WORD_QUOTED | BASH_WORD_EXPANDS)) &&
           !strcmp(t->text, kw);
}

static const char *const KEYWORDS[] = {
    "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "for", "select",
    "case", "esac", "function", "{", "}", "[[", "]]", "!", "time", "coproc", "in", NULL,
};

static bool is_keyword(const token *t)
{
    for (size_t k = 0; KEYWORDS[k]; k++)
        if (word_is(t, KEYWORDS[k]))
            return true;
    return false;
}

/* Copies the collected parts into the arena and appends a command. Returns
 * its index, or -1 when the command limit stopped the parse. */
static long emit(parser *p, const vec *argv, const vec *assign, bash_redir *redir,
                 size_t nredir, unsigned flags)
{
    bash_cmds *o = p->out;
    if (o->n >= BASH_PARSE_MAX_CMDS) {
        abort_parse(p, "too many commands");
        return -1;
    }
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 16;
        o->cmds = xrealloc(o->cmds, o->cap * sizeof *o->cmds);
    }
    bash_cmd *c = &o->cmds[o->n];
    memset(c, 0, sizeof *c);
    const char **av = arena_alloc(&o->mem, (argv->n + 1) * sizeof *av);
    unsigned *af = arena_alloc(&o->mem, (argv->n + 1) * sizeof *af);
    for (size_t k = 0; k < argv->n; k++) {
        av[k] = argv->p[k];
        af[k] = argv->f[k];
    }
    c->argc = argv->n;
    c->argv = av;
    c->argv_flags = af;
    const char **as = arena_alloc(&o->mem, (assign->n + 1) * sizeof *as);
    for (size_t k = 0; k < assign->n; k++)
        as[k] = assign->p[k];
    c->nassign = assign->n;
    c->assign = as;
    if (nredir) {
        bash_redir *r = arena_alloc(&o->mem, nredir * sizeof *r);
        memcpy(r, redir, nredir * sizeof *r);
        c->redir = r;
    }
    c->nredir = nredir;
    c->flags = flags | (p->subst ? BASH_CMD_SUBST : 0) | (p->func ? BASH_CMD_FUNCTION : 0);
    c->depth = p->nest;
    c->pipeline = p->pipeline;
    c->pipe_pos = p->pipe_pos;
    c->parent = -1;
    c->function = p->func;
    if (c->argc && (c->argv_flags[0] & (BASH_WORD_EXPANDS | BASH_WORD_GLOB)))
        uncertain(p, "the command name is an expansion");
    return (long)o->n++;
}

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* The target word of a redirection token; false (and uncertain) when there
 * is none. */
static bool redir_target(parser *p, const token *rt, bash_redir *r)
{
    token w;
    next(p, &w);
    if (w.kind != TK_WORD) {
        uncertain(p, "redirection without a target");
        pushback(p, &w);
        return false;
    }
    r->fd = rt->fd;
    r->target = w.text;
    r->target_flags = w.wflags;
    r->kind = (bash_redir_kind)rt->rkind;
    if (rt->rkind == R_DUP_IN || rt->rkind == R_DUP_OUT) {
        const char *tg = w.text;
        size_t tl = strlen(tg);
        bool dup = !(w.wflags & BASH_WORD_EXPANDS) &&
                   (!strcmp(tg, "-") || all_digits(tg) ||
                    (tl > 1 && tg[tl - 1] == '-' && strspn(tg, "0123456789") == tl - 1));
        if (dup)
            r->kind = BASH_REDIR_DUP;
        else if (rt->rkind == R_DUP_OUT)
            r->kind = rt->fd < 0 || rt->fd == 1 ? BASH_REDIR_OUT_ALL : BASH_REDIR_OUT;
        else
            r->kind = BASH_REDIR_IN;
    }
    if (r->kind == BASH_REDIR_HEREDOC) {
        if (p->nhd == p->caphd) {
            p->caphd = p->caphd ? p->caphd * 2 : 4;
            p->hd = xrealloc(p->hd, p->caphd * sizeof *p->hd);
        }
        p->hd[p->nhd].delim = w.text;
        p->hd[p->nhd].quoted = (w.wflags & BASH_WORD_QUOTED) != 0;
        p->hd[p->nhd].strip = rt->strip_tabs;
        p->nhd++;
    }
    return true;
}

/* Redirections after a compound command ( `} > f`, `done < f` ): recorded
 * as a command with no words so write checks see them. */
static void compound_redirs(parser *p)
{
    bash_redir *rs = NULL;
    size_t nr = 0, cap = 0;
    for (;;) {
        token t;
        next(p, &t);
        if (t.kind != TK_REDIR) {
            pushback(p, &t);
            break;
        }
        bash_redir r;
        if (!redir_target(p, &t, &r))
            break;
        if (nr == cap) {
            cap = cap ? cap * 2 : 4;
            rs = xrealloc(rs, cap * sizeof *rs);
        }
        rs[nr++] = r;
    }
    if (nr) {
        vec none = {0};
        emit(p, &none, &none, rs, nr, 0);
    }
    free(rs);
}

/* The body of a function definition; the '(' ')' or name is read. */
static void function_body(parser *p, const char *name)
{
    token t;
    do
        next(p, &t);
    while (t.kind == TK_NEWLINE);
    const char *saved = p->func;
    p->func = name;
    if (word_is(&t, "{")) {
        if (enter(p)) {
            p->nest++;
            parse_list(p, STOP_RBRACE);
            p->nest--;
            leave(p);
        }
        compound_redirs(p);
    } else if (t.kind == TK_OP && t.op == OP_LPAREN) {
        if (enter(p)) {
            p->nest++;
            parse_list(p, STOP_RPAREN);
            p->nest--;
            leave(p);
        }
        compound_redirs(p);
    } else {
        uncertain(p, "function body is not a { } or ( ) group");
        pushback(p, &t);
    }
    p->func = saved;
}

static void parse_simple(parser *p)
{
    vec argv = {0}, assign = {0};
    bash_redir *rs = NULL;
    size_t nr = 0, cap = 0;
    for (;;) {
        token t;
        next(p, &t);
        if (t.kind == TK_WORD) {
            if (argv.n == 0 && t.assign) {
                vec_push(&assign, t.text, t.wflags);
                continue;
            }
            if (argv.n == 0 && assign.n == 0 && nr == 0) {
                token u;
                next(p, &u);
                if (u.kind == TK_OP && u.op == OP_LPAREN) {
                    token w;
                    next(p, &w);
                    if (w.kind == TK_OP && w.op == OP_RPAREN) {
                        function_body(p, t.text);
                    } else {
                        uncertain(p, "unexpected (");
                        pushback(p, &w);
                    }
                    goto out;
                }
                pushback(p, &u);
            }
            vec_push(&argv, t.text, t.wflags);
        } else if (t.kind == TK_REDIR) {
            bash_redir r;
            if (!redir_target(p, &t, &r))
                continue;
            if (nr == cap) {
                cap = cap ? cap * 2 : 4;
                rs = xrealloc(rs, cap * sizeof *rs);
            }
            rs[nr++] = r;
        } else {
            if (t.kind == TK_OP && t.op == OP_LPAREN && (argv.n || assign.n || nr))
                uncertain(p, "unexpected (");
            pushback(p, &t);
            break;
        }
    }
    if (argv.n || assign.n || nr) {
        long idx = emit(p, &argv, &assign, rs, nr, 0);
        if (idx >= 0)
            derive(p, (size_t)idx, 0);
    }
out:
    vec_free(&argv);
    vec_free(&assign);
    free(rs);
}

static void mark_range(parser *p, size_t from, unsigned flag)
{
    for (size_t k = from; k < p->out->n; k++)
        if (!(p->out->cmds[k].flags & BASH_CMD_SUBST) || p->subst)
            p->out->cmds[k].flags |= flag;
}

/* ( … ) after its '(' was read: a subshell, or (( … )) arithmetic. */
static void parse_paren(parser *p)
{
    if (peek(p, 0) == '(') {
        size_t save = p->i;
        p->i++;
        if (scan_arith(p)) {
            compound_redirs(p);
            return;
        }
        p->i = save;
    }
    if (enter(p)) {
        p->nest++;
        parse_list(p, STOP_RPAREN);
        p->nest--;
        leave(p);
    }
    compound_redirs(p);
}

/* cmd | cmd |& cmd … A compound element inside the pipeline (while, if,
 * { }) ends it here; the list loop reads the keyword, so pipe flags are
 * not set on its commands. */
static void parse_pipeline(parser *p)
{
    unsigned id = ++p->out->next_pipeline, pos = 0;
    unsigned saved_pl = p->pipeline, saved_pos = p->pipe_pos;
    for (;;) {
        size_t el = p->out->n;
        p->pipeline = id;
        p->pipe_pos = pos;
        token t;
        next(p, &t);
        if (word_is(&t, "!"))
            continue;
        if (word_is(&t, "time")) {
            token u;
            next(p, &u);
            if (!word_is(&u, "-p"))
                pushback(p, &u);
            continue;
        }
        if (t.kind == TK_WORD && is_keyword(&t)) {
            pushback(p, &t);
            break;
        }
        if (t.kind == TK_OP && t.op == OP_LPAREN) {
            parse_paren(p);
        } else if (t.kind == TK_WORD || t.kind == TK_REDIR) {
            pushback(p, &t);
            parse_simple(p);
        } else {
            if (pos > 0)
                uncertain(p, "| without a command after it");
            pushback(p, &t);
            break;
        }
        if (pos > 0)
            mark_range(p, el, BASH_CMD_PIPE_IN);
        next(p, &t);
        if (t.kind == TK_OP && (t.op == OP_PIPE || t.op == OP_PIPE_AMP)) {
            mark_range(p, el, BASH_CMD_PIPE_OUT);
            pos++;
            continue;
        }
        pushback(p, &t);
        break;
    }
    p->pipeline = saved_pl;
    p->pipe_pos = saved_pos;
}

/* for NAME [in WORDS] ; / for (( … )) — the list loop reads `do`. */
static void parse_for(parser *p)
{
    token t;
    next(p, &t);
    if (t.kind == TK_OP && t.op == OP_LPAREN && peek(p, 0) == '(') {
        p->i++;
        if (!scan_arith(p))
            uncertain(p, "malformed for (( ))");
        return;
    }
    if (t.kind != TK_WORD) {
        uncertain(p, "for without a name");
        pushback(p, &t);
        return;
    }
    do
        next(p, &t);
    while (t.kind == TK_NEWLINE);
    if (!word_is(&t, "in")) {
        if (!(t.kind == TK_OP && t.op == OP_SEMI))
            pushback(p, &t);
        return;
    }
    /* The words are lexed (their substitutions run) and dropped. */
    for (;;) {
        next(p, &t);
        if (t.kind == TK_WORD)
            continue;
        if (t.kind == TK_NEWLINE || (t.kind == TK_OP && t.op == OP_SEMI))
            return;
        uncertain(p, "malformed for … in");
        pushback(p, &t);
        return;
    }
}

/* case WORD in [(]PAT[|PAT]…) LIST ;; … esac */
static void parse_case(parser *p)
{
    token t;
    next(p, &t);
    if (t.kind != TK_WORD) {
        uncertain(p, "case without a word");
        pushback(p, &t);
        return;
    }
    do
        next(p, &t);
    while (t.kind == TK_NEWLINE);
    if (!word_is(&t, "in")) {
        uncertain(p, "case without in");
        pushback(p, &t);
        return;
    }
    for (;;) {
        do
            next(p, &t);
        while (t.kind == TK_NEWLINE);
        if (word_is(&t, "esac"))
            break;
        if (t.kind == TK_EOF) {
            uncertain(p, "missing esac");
            return;
        }
        if (t.kind == TK_OP && t.op == OP_LPAREN)
            next(p, &t);
        for (;;) {
            if (t.kind != TK_WORD) {
                uncertain(p, "malformed case pattern");
                pushback(p, &t);
                return;
            }
            next(p, &t);
            if (t.kind == TK_OP && t.op == OP_PIPE) {
                next(p, &t);
                continue;
            }
            if (t.kind == TK_OP && t.op == OP_RPAREN)
                break;
            uncertain(p, "malformed case pattern");
            pushback(p, &t);
            return;
        }
        if (!enter(p))
            return;
        p->nest++;
        parse_list(p, STOP_CASE);
        p->nest--;
        leave(p);
        if (p->out->aborted)
            return;
    }
    compound_redirs(p);
}

/* [[ … ]]: a test, runs nothing itself; its words may hold substitutions. */
static void parse_cond(parser *p)
{
    bool saved = p->cond;
    p->cond = true;
    for (;;) {
        token t;
        next(p, &t);
        if (t.kind == TK_EOF) {
            uncertain(p, "missing ]]");
            break;
        }
        if (word_is(&t, "]]"))
            break;
    }
    p->cond = saved;
    compound_redirs(p);
}

/* Handles a reserved word met where a command starts. Returns true when it
 * ends the current list (`}` or `esac` for their lists). */
static bool keyword(parser *p, token *t, char *ks, size_t *nks, stop_at stop)
{
    const char *w = t->text;
    char top = *nks ? ks[*nks - 1] : 0;
    if (!strcmp(w, "if") || !strcmp(w, "while") || !strcmp(w, "until") ||
        !strcmp(w, "for") || !strcmp(w, "select")) {
        if (*nks >= KEYWORD_MAX) {
            abort_parse(p, "if/while/for nested too deep");
            return true;
        }
        ks[(*nks)++] = w[0] == 'i' ? 'i' : 'l';
        if (w[0] == 'f' || w[0] == 's')
            parse_for(p);
    } else if (!strcmp(w, "then") || !strcmp(w, "elif") || !strcmp(w, "else")) {
        if (top != 'i')
            uncertain(p, "then/else without if");
    } else if (!strcmp(w, "do")) {
        if (top != 'l')
            uncertain(p, "do without while/for");
    } else if (!strcmp(w, "fi") || !strcmp(w, "done")) {
        if (top != (w[0] == 'f' ? 'i' : 'l'))
            uncertain(p, "fi/done without its opening word");
        else
            (*nks)--;
        compound_redirs(p);
    } else if (!strcmp(w, "case")) {
        parse_case(p);
    } else if (!strcmp(w, "function")) {
        token name;
        next(p, &name);
        if (name.kind != TK_WORD) {
            uncertain(p, "function without a name");
            pushback(p, &name);
            return false;
        }
        token u;
        next(p, &u);
        if (u.kind == TK_OP && u.op == OP_LPAREN) {
            next(p, &u);
            if (!(u.kind == TK_OP && u.op == OP_RPAREN)) {
                uncertain(p, "unexpected (");
                pushback(p, &u);
                return false;
            }
        } else {
            pushback(p, &u);
        }
        function_body(p, name.text);
    } else if (!strcmp(w, "{")) {
        if (enter(p)) {
            p->nest++;
            parse_list(p, STOP_RBRACE);
            p->nest--;
            leave(p);
        }
        compound_redirs(p);
    } else if (!strcmp(w, "}")) {
        if (stop == STOP_RBRACE)
            return true;
        uncertain(p, "} without {");
    } else if (!strcmp(w, "esac")) {
        if (stop == STOP_CASE) {
            pushback(p, t);
            return true;
        }
        uncertain(p, "esac without case");
    } else if (!strcmp(w, "[[")) {
        parse_cond(p);
    } else if (!strcmp(w, "time")) {
        token u;
        next(p, &u);
        if (!word_is(&u, "-p"))
            pushback(p, &u);
    } else if (!strcmp(w, "]]") || !strcmp(w, "in")) {
        uncertain(p, "unexpected reserved word");
    }
    /* "!" and "coproc" change nothing about what runs. */
    return false;
}

static void parse_list(parser *p, stop_at stop)
{
    char ks[KEYWORD_MAX];
    size_t nks = 0;
    bool need = false;          /* an operator is waiting for its command */
    bool after = false;         /* a command came since the last ; & or newline */
    size_t last = p->out->n;    /* first command of the last pipeline */
    for (;;) {
        if (p->out->aborted)
            return;
        token t;
        next(p, &t);
        if (t.kind == TK_EOF) {
            if (stop == STOP_RPAREN)
                uncertain(p, "missing )");
            else if (stop == STOP_RBRACE)
                uncertain(p, "missing }");
            else if (stop == STOP_CASE)
                uncertain(p, "missing ;; or esac");
            else if (need)
                uncertain(p, "the command ends with an operator");
            break;
        }
        if (t.kind == TK_NEWLINE) {
            if (!need)
                after = false;
            continue;
        }
        if (t.kind == TK_OP) {
            switch (t.op) {
            case OP_SEMI:
                if (need || !after)
                    uncertain(p, "; without a command before it");
                after = false;
                continue;
            case OP_AMP:
                if (need || !after)
                    uncertain(p, "& without a command before it");
                for (size_t k = last; k < p->out->n; k++)
                    p->out->cmds[k].flags |= BASH_CMD_BACKGROUND;
                after = false;
                continue;
            case OP_AND: case OP_OR: case OP_PIPE: case OP_PIPE_AMP:
                if (need || !after)
                    uncertain(p, "an operator without a command before it");
                need = true;
                continue;
            case OP_RPAREN:
                if (stop == STOP_RPAREN)
                    goto done;
                uncertain(p, "unexpected )");
                continue;
            case OP_DSEMI: case OP_SEMI_AMP: case OP_DSEMI_AMP:
                if (stop == STOP_CASE)
                    goto done;
                uncertain(p, "unexpected ;;");
                continue;
            default:
                break;
            }
        }
        if (t.kind == TK_WORD && is_keyword(&t)) {
            need = false;
            after = true;
            if (keyword(p, &t, ks, &nks, stop))
                goto done;
            continue;
        }
        pushback(p, &t);
        last = p->out->n;
        size_t before = p->consumed;
        parse_pipeline(p);
        need = false;
        after = true;
        if (p->consumed == before) {
            /* Nothing could be read here: drop the token so the loop
             * always moves on. */
            next(p, &t);
            if (t.kind == TK_EOF) {
                pushback(p, &t);
                continue;
            }
            uncertain(p, "unexpected token");
        }
    }
done:
    if (nks)
        uncertain(p, "if/while/for without its closing word");
}

/* ---- wrappers: commands that run their arguments -------------------- */

/* Options of a wrapper: letters that take a value (in the same word or the
 * next one), letters that do not, long options that take a value when not
 * written with '='. Anything else is an option the parser does not know:
 * uncertain. positional: words between the options and the command (the
 * duration of timeout, the mask of taskset, the lock file of flock).
 * nocmd: option letters after which no command of the arguments runs
 * (taskset -p PID, chrt -p). */
typedef struct wrapper {
    const char *name;
    const char *with_arg;
    const char *flags;
    const char *const *long_with_arg;
    bool transparent;
    int kind;   /* 0 plain, W_ENV, W_TIMEOUT, W_COMMAND, W_SUDO, W_XARGS */
    unsigned positional;
    const char *nocmd;
} wrapper;

enum { W_PLAIN, W_ENV, W_TIMEOUT, W_COMMAND, W_SUDO, W_XARGS, W_NICE, W_PARALLEL };

static const char *const SUDO_LONG[] = {"--user", "--group", "--close-from", "--chdir", "--host",
                                        "--prompt", "--role", "--type", "--command-timeout",
                                        "--other-user", NULL};
static const char *const ENV_LONG[] = {"--unset", "--chdir", NULL};
static const char *const TIMEOUT_LONG[] = {"--signal", "--kill-after", NULL};
static const char *const NICE_LONG[] = {"--adjustment", NULL};
static const char *const STDBUF_LONG[] = {"--input", "--output", "--error", NULL};
static const char *const XARGS_LONG[] = {"--arg-file", "--delimiter", "--eof", "--replace",
                                         "--max-lines", "--max-args", "--max-procs",
                                         "--max-chars", "--process-slot-var", NULL};
static const char *const IONICE_LONG[] = {"--class", "--classdata", NULL};
static const char *const CHRT_LONG[] = {"--sched-runtime", "--sched-period", "--sched-deadline",
                                        NULL};
static const char *const FLOCK_LONG[] = {"--timeout", "--wait", "--conflict-exit-code", NULL};
static const char *const UNSHARE_LONG[] = {"--setuid", "--setgid", "--root", "--wd",
                                           "--propagation", "--map-user", "--map-group",
                                           "--map-users", "--map-groups", NULL};
static const char *const STRACE_LONG[] = {"--output", "--trace", "--signal", "--attach",
                                          "--user", "--env", "--string-limit", "--columns",
                                          "--summary-sort-by", "--trace-path", "--inject",
                                          "--fault", "--status", "--quiet", "--decode-fds",
                                          NULL};
static const char *const CPULIMIT_LONG[] = {"--limit", "--pid", "--exe", "--cpu", NULL};
static const char *const CHROOT_LONG[] = {"--userspec", "--groups", NULL};
static const char *const NSENTER_LONG[] = {"--target", "--setuid", "--setgid", NULL};
static const char *const SETPRIV_LONG[] = {"--reuid", "--regid", "--ruid", "--rgid", "--euid",
                                           "--egid", "--groups", "--inh-caps", "--ambient-caps",
                                           "--bounding-set", "--securebits", "--pdeathsig",
                                           "--selinux-label", "--apparmor-profile",
                                           "--landlock-access", "--landlock-rule", NULL};
static const char *const PRLIMIT_LONG[] = {"--pid", "--output", NULL};
static const char *const SYSTEMD_RUN_LONG[] = {"--unit", "--property", "--description",
                                               "--slice", "--uid", "--gid", "--setenv",
                                               "--working-directory", "--nice", "--host",
                                               "--machine", "--service-type", "--on-calendar",
                                               "--on-active", "--timer-property",
                                               "--path-property", "--socket-property", NULL};
static const char *const FAKEROOT_LONG[] = {"--lib", "--faked", NULL};
static const char *const PKEXEC_LONG[] = {"--user", NULL};
static const char *const PARALLEL_LONG[] = {"--jobs", "--arg-file", "--delimiter", "--sshlogin",
                                            "--max-args", "--max-lines", "--joblog", "--results",
                                            "--tmpdir", NULL};
static const char *const NONE_LONG[] = {NULL};

static const wrapper WRAPPERS[] = {
    {"sudo", "ugCDhprtTU", "AbEHnPSkK", SUDO_LONG, false, W_SUDO, 0, ""},
    {"doas", "uC", "ns", NONE_LONG, false, W_SUDO, 0, ""},
    {"pkexec", "", "", PKEXEC_LONG, false, W_PLAIN, 0, ""},
    {"env", "uCS", "i0v", ENV_LONG, true, W_ENV, 0, ""},
    {"nice", "n", "", NICE_LONG, true, W_NICE, 0, ""},
    {"ionice", "cn", "t", IONICE_LONG, true, W_PLAIN, 0, "p"},
    {"nohup", "", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"time", "fo", "pavq", NONE_LONG, true, W_PLAIN, 0, ""},
    {"timeout", "sk", "v", TIMEOUT_LONG, true, W_TIMEOUT, 1, ""},
    {"stdbuf", "ioe", "", STDBUF_LONG, true, W_PLAIN, 0, ""},
    {"command", "", "p", NONE_LONG, true, W_COMMAND, 0, ""},
    {"builtin", "", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"exec", "a", "cl", NONE_LONG, true, W_PLAIN, 0, ""},
    {"setsid", "", "cfw", NONE_LONG, true, W_PLAIN, 0, ""},
    {"xargs", "adEILnPs", "0rtpxo", XARGS_LONG, false, W_XARGS, 0, ""},
    {"taskset", "", "ac", NONE_LONG, true, W_PLAIN, 1, "p"},
    {"flock", "Ew", "sxunoFv", FLOCK_LONG, false, W_PLAIN, 1, ""},   /* creates its lock file */
    {"chrt", "TPD", "abdfiorRve", CHRT_LONG, true, W_PLAIN, 1, "pm"},
    {"unshare", "SGRw", "muinpUCTfrcl", UNSHARE_LONG, false, W_PLAIN, 0, ""},
    {"strace", "eopsuEabIOPSXU", "cCdDfFhikqrtTvVwxyzZn", STRACE_LONG, false, W_PLAIN, 0, ""},
    {"ltrace", "eopsuaADFlnxLw", "bcCfhirStTV", STRACE_LONG, false, W_PLAIN, 0, ""},
    {"cpulimit", "lc", "zikrvqbf", CPULIMIT_LONG, false, W_PLAIN, 0, "pe"},
    {"firejail", "", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"proot", "rbmqwkvRSip", "0hVn", NONE_LONG, false, W_PLAIN, 0, ""},
    {"chroot", "", "", CHROOT_LONG, false, W_PLAIN, 1, ""},
    {"nsenter", "tSG", "amuinpUCTrwFZ", NSENTER_LONG, false, W_PLAIN, 0, ""},
    {"dbus-launch", "", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"busybox", "", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"setpriv", "", "d", SETPRIV_LONG, false, W_PLAIN, 0, ""},
    {"prlimit", "o", "", PRLIMIT_LONG, true, W_PLAIN, 0, "p"},
    {"numactl", "imNCpP", "l", NONE_LONG, true, W_PLAIN, 0, ""},
    {"systemd-run", "pEMH", "tPqGrhdu", SYSTEMD_RUN_LONG, false, W_PLAIN, 0, ""},
    {"fakeroot", "lisb", "uhv", FAKEROOT_LONG, false, W_PLAIN, 0, ""},
    {"faketime", "p", "fm", NONE_LONG, true, W_PLAIN, 1, ""},
    {"eatmydata", "", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"nocache", "n", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"chronic", "", "ev", NONE_LONG, true, W_PLAIN, 0, ""},
    {"ifne", "", "n", NONE_LONG, true, W_PLAIN, 0, ""},
    {"valgrind", "", "qvh", NONE_LONG, false, W_PLAIN, 0, ""},
    {"catchsegv", "", "", NONE_LONG, true, W_PLAIN, 0, ""},
    {"torsocks", "uapP", "idqh", NONE_LONG, false, W_PLAIN, 0, ""},
    {"proxychains", "f", "q", NONE_LONG, false, W_PLAIN, 0, ""},
    {"proxychains4", "f", "q", NONE_LONG, false, W_PLAIN, 0, ""},
    {"unbuffer", "", "p", NONE_LONG, true, W_PLAIN, 0, ""},
    {"gosu", "", "", NONE_LONG, false, W_PLAIN, 1, ""},
    {"su-exec", "", "", NONE_LONG, false, W_PLAIN, 1, ""},
    {"setarch", "", "vRFZLXBIST3", NONE_LONG, true, W_PLAIN, 1, ""},
    {"linux32", "", "vRFZLXBIST3", NONE_LONG, true, W_PLAIN, 0, ""},
    {"linux64", "", "vRFZLXBIST3", NONE_LONG, true, W_PLAIN, 0, ""},
    {"runcon", "turl", "c", NONE_LONG, false, W_PLAIN, 0, ""},
    {"tini", "", "sgvwl", NONE_LONG, true, W_PLAIN, 0, ""},
    {"dumb-init", "r", "cv", NONE_LONG, true, W_PLAIN, 0, ""},
    {"parallel", "jaIdEnNsLP", "kqvtX0r", PARALLEL_LONG, false, W_PARALLEL, 0, ""},
    /* package runners and session tools that run their arguments */
    {"npx", "p", "yq", NONE_LONG, false, W_PLAIN, 0, ""},   /* npx -c: unknown, uncertain */
    {"bunx", "p", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"uvx", "", "q", NONE_LONG, false, W_PLAIN, 0, ""},
    {"caffeinate", "tw", "dimsu", NONE_LONG, true, W_PLAIN, 0, ""},
    {"run0", "uDg", "", NONE_LONG, false, W_PLAIN, 0, ""},
    {"screen", "Scs", "dmDRrAaLlOiqUx", NONE_LONG, false, W_PLAIN, 0, ""},
    {NULL, NULL, NULL, NULL, false, 0, 0, NULL},
};

static bool in_list(const char *const *list, const char *s, size_t n)
{
    for (; *list; list++)
        if (strlen(*list) == n && !strncmp(*list, s, n))
            return true;
    return false;
}

/* Appends a command derived from argv[from, to) of cmds[idx] and unwraps it
 * further. */
static void emit_derived_x(parser *p, size_t idx, size_t from, size_t to, const vec *assign,
                           bool transparent, unsigned level, unsigned extra,
                           const char *placeholder)
{
    bash_cmd c = p->out->cmds[idx];
    vec av = {0};
    /* A word holding the placeholder (xargs -I{}, find -exec {}) becomes
     * what the wrapper reads at run time: as good as an expansion. */
    for (size_t k = from; k < to; k++)
        vec_push(&av, (void *)c.argv[k],
                 c.argv_flags[k] | (placeholder && *placeholder && strstr(c.argv[k], placeholder)
                                        ? BASH_WORD_EXPANDS
                                        : 0));
    vec none = {0};
    const char *func = p->func;
    bool subst = p->subst;
    unsigned pl = p->pipeline, pp = p->pipe_pos, nest = p->nest;
    p->func = c.function;
    p->subst = (c.flags & BASH_CMD_SUBST) != 0;
    p->pipeline = c.pipeline;
    p->pipe_pos = c.pipe_pos;
    p->nest = c.depth;
    long d = emit(p, &av, assign ? assign : &none, NULL, 0, 0);
    p->func = func;
    p->subst = subst;
    p->pipeline = pl;
    p->pipe_pos = pp;
    p->nest = nest;
    vec_free(&av);
    if (d < 0)
        return;
    bash_cmd *dc = &p->out->cmds[d];
    dc->flags |= BASH_CMD_DERIVED | extra |
                 (c.flags & (BASH_CMD_PIPE_IN | BASH_CMD_PIPE_OUT | BASH_CMD_BACKGROUND |
                             BASH_CMD_FUNCTION | BASH_CMD_MORE_ARGS));
    if (transparent)
        dc->flags |= BASH_CMD_TRANSPARENT;
    dc->parent = (long)idx;
    derive(p, (size_t)d, level + 1);
}

static void emit_derived(parser *p, size_t idx, size_t from, size_t to, const vec *assign,
                         bool transparent, unsigned level)
{
    emit_derived_x(p, idx, from, to, assign, transparent, level, 0, NULL);
}

/* sudo, env, timeout, … : skips the wrapper's options and returns the index
 * of the command word, or argc when there is none. *transparent is cleared
 * when options or assignments change how the command runs. */
static size_t skip_wrapper(parser *p, const bash_cmd *c, const wrapper *w, vec *assign,
                           bool *transparent)
{
    size_t i = 1;
    while (i < c->argc) {
        const char *a = c->argv[i];
        if (w->kind == W_ENV || w->kind == W_SUDO) {
            const char *eq = strchr(a, '=');
            if (a[0] != '-' && eq && assign_prefix(a, (size_t)(eq - a))) {
                vec_push(assign, (void *)a, c->argv_flags[i]);
                *transparent = false;
                i++;
                continue;
            }
        }
        if (a[0] != '-' || !a[1])
            break;
        if (w->kind == W_NICE && isdigit((unsigned char)a[1])) { /* nice -10 */
            i++;
            continue;
        }
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[1] == '-') {
            const char *eq = strchr(a, '=');
            size_t nl = eq ? (size_t)(eq - a) : strlen(a);
            if (w->kind == W_ENV && (!strncmp(a, "--split-string", nl) && nl > 2)) {
                uncertain(p, "env -S");
                return c->argc;
            }
            if (in_list(w->long_with_arg, a, nl) && !eq)
                i++;
            i++;
            /* Long flags without values (--preserve-status, --null, …)
             * are accepted: none of them changes which command runs. */
            continue;
        }
        bool took_arg = false;
        for (size_t k = 1; a[k]; k++) {
            char o = a[k];
            if (w->kind == W_ENV && o == 'S') {
                uncertain(p, "env -S");
                return c->argc;
            }
            if (w->kind == W_COMMAND && (o == 'v' || o == 'V'))
                return c->argc;   /* command -v only looks the name up */
            if (w->kind == W_SUDO && strchr("eilsvV", o) && !strchr(w->flags, o)) {
                /* sudo -e edits files, -i/-s start a shell, -l/-v list or
                 * validate: no command of the arguments runs as given. */
                if (o == 'i' || o == 's')
                    continue;
                return c->argc;
            }
            if (w->kind == W_XARGS && (o == 'i' || o == 'l'))
                break;   /* optional value glued to the letter */
            if (w->nocmd && strchr(w->nocmd, o))
                return c->argc;   /* taskset -p PID: no command runs */
            if (strchr(w->with_arg, o)) {
                if (!a[k + 1])
                    took_arg = true;
                break;
            }
            if (!strchr(w->flags, o)) {
                uncertain(p, "unknown option of a command wrapper");
                return c->argc;
            }
        }
        /* Options of nice, timeout, stdbuf … change how, not what, runs;
         * env's change the environment the command sees. */
        if (w->kind == W_ENV)
            *transparent = false;
        i += took_arg ? 2 : 1;
    }
    for (unsigned k = 0; k < w->positional && i < c->argc; k++)
        i++;   /* timeout's duration, taskset's mask, flock's file … */
    return i;
}

/* sh -c SCRIPT, bash -lc SCRIPT, …: returns the index of SCRIPT, or 0. */
static size_t shell_script_arg(const bash_cmd *c)
{
    bool has_c = false;
    size_t i = 1;
    for (; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        }
        if (a[0] != '-' && a[0] != '+')
            break;
        if (a[1] == '-') {
            if (!strcmp(a, "--rcfile") || !strcmp(a, "--init-file"))
                i++;
            continue;
        }
        if (!strcmp(a + 1, "o") || !strcmp(a + 1, "O"))
            i++;
        else if (a[0] == '-' && strchr(a + 1, 'c'))
            has_c = true;
    }
    return has_c && i < c->argc ? i : 0;
}

static bool is_shell(const char *name)
{
    static const char *const SHELLS[] = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash",
                                         "yash", "rbash", NULL};
    for (size_t k = 0; SHELLS[k]; k++)
        if (!strcmp(name, SHELLS[k]))
            return true;
    return false;
}

/* The file a shell or `source` operand names when it means standard input. */
static bool is_stdin_path(const char *a)
{
    return !strcmp(a, "-") || !strcmp(a, "/dev/stdin") || !strcmp(a, "/dev/fd/0") ||
           !strcmp(a, "/proc/self/fd/0");
}

/* True when the shell command c (no -c script) reads its script from
 * standard input: -s, no script operand, or an operand that is stdin. */
static bool shell_reads_stdin(const bash_cmd *c)
{
    for (size_t i = 1; i < c->argc; i++) {
        const char *a = c->argv[i];
        if (!strcmp(a, "--"))
            return i + 1 >= c->argc || is_stdin_path(c->argv[i + 1]);
        if (is_stdin_path(a))
            return true;
        if (a[0] != '-' && a[0] != '+')
            return false;   /* a script file: its text is not on the line */
        if (a[1] == '-') {
            if (!strcmp(a, "--rcfile") || !strcmp(a, "--init-file"))
                i++;
            continue;
        }
        if (!strcmp(a + 1, "o") || !strcmp(a + 1, "O"))
            i++;
        else if (a[0] == '-' && strchr(a + 1, 's'))
            return true;    /* -s: the rest are positional parameters */
    }
    return true;
}

/* c (or the command it was derived from: `sudo bash <<< …`) reads its
 * script from standard input: a here-string is parsed as a script of its
 * own; a here-document or a pipe is not followed, hence uncertain. A
 * redirected file counts as a script file, the same as `bash FILE`. */
static void derive_stdin_script(parser *p, size_t idx, const char *what)
{
    for (long at = (long)idx; at >= 0; at = p->out->cmds[at].parent) {
        const bash_cmd *o = &p->out->cmds[at];
        /* Of several redirections of stdin the last one wins. */
        const bash_redir *r = NULL;
        for (size_t k = 0; k < o->nredir; k++)
            if (o->redir[k].fd <= 0 &&
                (o->redir[k].kind == BASH_REDIR_HERESTRING ||
                 o->redir[k].kind == BASH_REDIR_HEREDOC || o->redir[k].kind == BASH_REDIR_IN ||
                 o->redir[k].kind == BASH_REDIR_INOUT))
                r = &o->redir[k];
        if (r) {
            if (r->kind == BASH_REDIR_HERESTRING) {
                if (r->target_flags & BASH_WORD_EXPANDS)
                    uncertain(p, "a script built at run time on standard input");
                sub_parse(p, r->target, strlen(r->target), false, (long)idx);
                return;
            }
            if (r->kind == BASH_REDIR_HEREDOC) {
                uncertain(p, what);
                return;
            }
            if (r->kind == BASH_REDIR_IN || r->kind == BASH_REDIR_INOUT)
                return;   /* a script file, as `bash FILE` is */
        }
        if ((o->flags & BASH_CMD_PIPE_IN) || o->pipe_pos > 0) {
            uncertain(p, what);
            return;
        }
        if (!(o->flags & BASH_CMD_DERIVED))
            return;
    }
}

/* Parses word k of c as a script of its own, derived from c. */
static void derive_script(parser *p, const bash_cmd *c, size_t idx, size_t k)
{
    if (c->argv_flags[k] & BASH_WORD_EXPANDS)
        uncertain(p, "a command built at run time");
    sub_parse(p, c->argv[k], strlen(c->argv[k]), false, (long)idx);
}

/* Commands that take a shell script as an option or argument:
 * flock … -c SCRIPT, script -c SCRIPT, runuser/sg … -c SCRIPT, and trap
 * 'SCRIPT' SIGNAL (run later, but run all the same). True when c was one
 * of them and has been handled. */
static bool derive_script_option(parser *p, const bash_cmd *c, size_t idx, const char *name,
                                 unsigned level)
{
    bool flock = !strcmp(name, "flock"), script = !strcmp(name, "script");
    bool runuser = !strcmp(name, "runuser") || !strcmp(name, "sg");
    if (!strcmp(name, "trap")) {
        size_t i = 1;
        while (i < c->argc && c->argv[i][0] == '-' && c->argv[i][1] && strcmp(c->argv[i], "--") &&
               strcmp(c->argv[i], "-"))
            i++;
        if (i < c->argc && !strcmp(c->argv[i], "--"))
            i++;
        /* trap ACTION SIGNAL…; a single word only resets that signal. */
        if (i + 1 < c->argc && strcmp(c->argv[i], "-"))
            derive_script(p, c, idx, i);
        return true;
    }
    if (!flock && !script && !runuser)
        return false;
    for (size_t k = 1; k + 1 < c->argc; k++) {
        const char *a = c->argv[k];
        size_t al = strlen(a);
        bool cluster_c = a[0] == '-' && al > 2 && a[1] != '-' && a[al - 1] == 'c' &&
                         strspn(a + 1, "aefqkEIOBTmxsunoFlgGwp") == al - 2; /* script -qc */
        if (!strcmp(a, "-c") || !strcmp(a, "--command") || cluster_c) {
            derive_script(p, c, idx, k + 1);
            return true;
        }
        if (!strncmp(a, "--command=", 10)) {
            sub_parse(p, a + 10, strlen(a + 10), false, (long)idx);
            return true;
        }
    }
    if (script)
        return true;   /* no -c: an interactive shell; the argument is the log file */
    if (runuser) {
        /* runuser -u USER CMD…, sg GROUP CMD… (sg hands its words to sh -c) */
        size_t from = c->argc;
        if (!strcmp(name, "sg")) {
            from = 2;
        } else {
            for (size_t k = 1; k + 1 < c->argc; k++)
                if (!strcmp(c->argv[k], "-u") || !strcmp(c->argv[k], "--user")) {
                    from = k + 2;
                    break;
                }
            if (from < c->argc && !strcmp(c->argv[from], "--"))
                from++;
        }
        if (from < c->argc)
            emit_derived(p, idx, from, c->argc, NULL, false, level);
        return true;
    }
    return false;   /* flock without -c: the wrapper table handles it */
}

/* Interpreters given code on the command line (python -c, perl -e, node
 * -e, …): the parser cannot follow the code, but when it can start
 * programs (os.system, subprocess, child_process, backticks, …) the
 * command may run anything — uncertain, so deny rules apply to it. */
static void interpreter_code(parser *p, const bash_cmd *c, long idx, const char *name)
{
    static const struct {
        const char *prefix;   /* program name, or its prefix ("python") */
        const char *opts;     /* option letters followed by code */
    } INTERP[] = {{"python", "c"}, {"pypy", "c"}, {"perl", "eE"}, {"ruby", "e"},
                  {"node", "ep"}, {"nodejs", "ep"}, {"bun", "e"}, {"deno", ""},
                  {"php", "r"},    {"lua", "e"},    {"Rscript", "e"}, {"awk", ""},
                  {"gawk", ""},    {"mawk", ""},    {"nawk", ""}};
    static const char *const SHELL_OUT[] = {
        "system", "exec", "popen", "spawn", "subprocess", "child_process", "`", "pty",
        "shell_exec", "passthru", "proc_open", "Open3", "%x", "qx", "fork", "os.", "Deno.",
        "Bun.", "|", NULL,
    };
    bool awk = false;
    const char *opts = NULL;
    for (size_t k = 0; k < sizeof INTERP / sizeof INTERP[0]; k++)
        if (!strncmp(name, INTERP[k].prefix, strlen(INTERP[k].prefix)) &&
            (!name[strlen(INTERP[k].prefix)] || isdigit((unsigned char)name[strlen(INTERP[k].prefix)]))) {
            opts = INTERP[k].opts;
            awk = strstr(INTERP[k].prefix, "awk") != NULL;
        }
    if (!opts)
        return;
    if (!awk && (c->argc == 1 || (c->argc == 2 && !strcmp(c->argv[1], "-")))) {
        /* The code comes on standard input: a pipe or here-document is
         * not followed; a here-string is looked at like -c code. */
        for (long at = idx; at >= 0; at = p->out->cmds[at].parent) {
            const bash_cmd *o = &p->out->cmds[at];
            for (size_t k = 0; k < o->nredir; k++) {
                const bash_redir *r = &o->redir[k];
                if (r->fd > 0)
                    continue;
                if (r->kind == BASH_REDIR_HEREDOC)
                    uncertain(p, "interpreter code on standard input");
                else if (r->kind == BASH_REDIR_HERESTRING)
                    for (size_t m = 0; SHELL_OUT[m]; m++)
                        if (strstr(r->target, SHELL_OUT[m])) {
                            uncertain(p, "interpreter code that can start programs");
                            return;
                        }
            }
            if ((o->flags & BASH_CMD_PIPE_IN) || o->pipe_pos > 0)
                uncertain(p, "interpreter code on standard input");
            if (!(o->flags & BASH_CMD_DERIVED))
                break;
        }
        return;
    }
    for (size_t k = 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        const char *code = NULL;
        if (awk) {
            if (a[0] == '-' && (a[1] == 'v' || a[1] == 'F' || a[1] == 'f') && !a[2])
                k++;   /* -v var=x, -F sep, -f file */
            else if (a[0] != '-')
                code = a;   /* the program text */
        } else if (a[0] == '-' && a[1] && a[1] != '-' && strchr(opts, a[strlen(a) - 1]) &&
                   k + 1 < c->argc) {
            code = c->argv[++k];
        } else if (!strcmp(a, "--eval") || !strcmp(a, "--print") || !strcmp(a, "eval")) {
            code = k + 1 < c->argc ? c->argv[++k] : NULL;
        }
        if (!code)
            continue;
        for (size_t m = 0; SHELL_OUT[m]; m++)
            if (strstr(code, SHELL_OUT[m])) {
                uncertain(p, "interpreter code that can start programs");
                return;
            }
        if (awk)
            return;
    }
}

/* Variables whose value a program runs as a shell command: GIT_EDITOR=X
 * git commit runs X. Their values are parsed as commands of their own. */
static void derive_assign_commands(parser *p, const bash_cmd *c, size_t idx)
{
    static const char *const RUN_VARS[] = {
        "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "EDITOR", "VISUAL", "PAGER", "GIT_PAGER",
        "MANPAGER", "SYSTEMD_PAGER", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_ASKPASS",
        "SSH_ASKPASS", "SUDO_ASKPASS", "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE", NULL};
    const char *name = bash_cmd_name(c);
    bool exports = !strcmp(name, "export") || !strcmp(name, "declare") ||
                   !strcmp(name, "typeset") || !strcmp(name, "readonly");
    size_t n = c->nassign + (exports ? c->argc : 0);
    for (size_t k = 0; k < n; k++) {
        /* export GIT_EDITOR=X: the later commands of the line get it */
        const char *a = k < c->nassign ? c->assign[k] : c->argv[k - c->nassign];
        const char *eq = strchr(a, '=');
        if (!eq || !eq[1])
            continue;
        bool run = false;
        for (size_t v = 0; RUN_VARS[v] && !run; v++)
            run = strlen(RUN_VARS[v]) == (size_t)(eq - a) && !strncmp(a, RUN_VARS[v], eq - a);
        if (!run)
            continue;
        if (strpbrk(eq + 1, "$`"))
            uncertain(p, "a command built at run time in a variable a program runs");
        sub_parse(p, eq + 1, strlen(eq + 1), false, (long)idx);
    }
}

/* Subcommands that run a command given in their arguments: npm/pnpm/yarn
 * exec CMD, pnpm/yarn dlx CMD, pipx/uv/poetry run CMD, bundle exec CMD
 * (words), git submodule foreach CMD, git bisect run CMD (words), git
 * rebase --exec/-x CMD, git filter-branch --*-filter CMD, git difftool
 * -x/--extcmd CMD (shell text); tmux's window-making subcommands and at /
 * batch (a script on stdin) are followed as far as possible, else
 * uncertain. True when c was one of them and has been handled. */
static bool derive_runner(parser *p, const bash_cmd *c, size_t idx, const char *name,
                          unsigned level)
{
    static const struct {
        const char *prog, *sub;
    } RUNS[] = {{"npm", "exec"},  {"npm", "x"},      {"pnpm", "exec"}, {"pnpm", "dlx"},
                {"yarn", "exec"}, {"yarn", "dlx"},   {"pipx", "run"},  {"uv", "run"},
                {"poetry", "run"}, {"bundle", "exec"}, {"pdm", "run"},  {"hatch", "run"},
                {"rye", "run"},   {"conda", "run"},  {"mamba", "run"}, {"bun", "x"},
                {"bun", "exec"}};
    if (!strcmp(name, "at") || !strcmp(name, "batch")) {
        for (size_t k = 1; k < c->argc; k++)
            if (!strcmp(c->argv[k], "-f") || !strncmp(c->argv[k], "-f", 2))
                return true;   /* a script file, as `bash FILE` */
        derive_stdin_script(p, idx, "at reads the commands it runs from standard input");
        return true;
    }
    if (!strcmp(name, "tmux")) {
        static const char *const MAKE_WIN[] = {"new-session", "new", "new-window", "neww",
                                               "split-window", "splitw", "respawn-pane",
                                               "respawnp", "respawn-window", "respawnw",
                                               "run-shell", "run", "if-shell", "if",
                                               "display-popup", "popup", "pipe-pane",
                                               "pipep", NULL};
        for (size_t k = 1; k < c->argc; k++)
            for (size_t m = 0; MAKE_WIN[m]; m++)
                if (!strcmp(c->argv[k], MAKE_WIN[m])) {
                    uncertain(p, "tmux runs a shell command");
                    return true;
                }
        return true;
    }
    for (size_t r = 0; r < sizeof RUNS / sizeof RUNS[0]; r++) {
        if (strcmp(name, RUNS[r].prog))
            continue;
        size_t i = 1;
        while (i < c->argc && c->argv[i][0] == '-')
            i++;   /* the manager's own options (npm --yes exec …) */
        if (i >= c->argc || strcmp(c->argv[i], RUNS[r].sub))
            continue;
        for (i++; i < c->argc && c->argv[i][0] == '-'; i++) {
            const char *a = c->argv[i];
            if (!strcmp(a, "--")) {
                i++;
                break;
            }
            if ((!strcmp(a, "-c") || !strcmp(a, "--call")) && i + 1 < c->argc) {
                derive_script(p, c, idx, ++i);   /* npm exec -c 'CMD' */
                continue;
            }
            if (!strncmp(a, "--call=", 7)) {
                sub_parse(p, a + 7, strlen(a + 7), false, (long)idx);
                continue;
            }
            if (!strchr(a, '=') && a[1] == '-' && i + 1 < c->argc &&
                (!strcmp(a, "--package") || !strcmp(a, "--spec") || !strcmp(a, "--with") ||
                 !strcmp(a, "--python") || !strcmp(a, "--directory") || !strcmp(a, "--project") ||
                 !strcmp(a, "--from") || !strcmp(a, "--name") || !strcmp(a, "--prefix") ||
                 !strcmp(a, "--workspace") || !strcmp(a, "--filter") || !strcmp(a, "--env")))
                i++;
            else if (!strcmp(a, "-p") || !strcmp(a, "-w") || !strcmp(a, "-n") ||
                     !strcmp(a, "-C") || !strcmp(a, "-e"))
                i++;
        }
        if (i < c->argc)
            emit_derived(p, idx, i, c->argc, NULL, false, level);
        return true;
    }
    if (strcmp(name, "git"))
        return false;
    size_t i = 1;
    while (i < c->argc && c->argv[i][0] == '-') {
        const char *a = c->argv[i];
        if (!strcmp(a, "-C") || !strcmp(a, "-c") || !strcmp(a, "--git-dir") ||
            !strcmp(a, "--work-tree") || !strcmp(a, "--namespace") ||
            !strcmp(a, "--config-env") || !strcmp(a, "--super-prefix") ||
            !strcmp(a, "--exec-path") || !strcmp(a, "--attr-source"))
            i++;
        i++;
    }
    if (i >= c->argc)
        return false;
    const char *sub = c->argv[i];
    if (!strcmp(sub, "submodule")) {
        size_t k = i + 1;
        while (k < c->argc && c->argv[k][0] == '-')
            k++;
        if (k < c->argc && !strcmp(c->argv[k], "foreach")) {
            /* foreach [--recursive] CMD…: the words joined, run by sh */
            loom_str script = LOOM_STR_INIT;
            for (k++; k < c->argc && c->argv[k][0] == '-' && strcmp(c->argv[k], "--"); k++)
                ;
            if (k < c->argc && !strcmp(c->argv[k], "--"))
                k++;
            for (; k < c->argc; k++) {
                if (c->argv_flags[k] & BASH_WORD_EXPANDS)
                    uncertain(p, "a command built at run time");
                if (script.len)
                    str_putc(&script, ' ');
                str_puts(&script, c->argv[k]);
            }
            if (script.len)
                sub_parse(p, script.ptr, script.len, false, (long)idx);
            str_free(&script);
        }
        return false;   /* the git rules still see `git submodule …` */
    }
    if (!strcmp(sub, "config")) {
        /* git config [set] alias.NAME TEXT / core.pager CMD …: a later git
         * runs TEXT (an alias: "!shell" or git words), so it is read as if
         * it ran here — as `alias NAME=TEXT` is. */
        static const char *const RUN_KEYS[] = {"core.pager", "core.sshcommand", "core.editor",
                                               "sequence.editor", "core.fsmonitor",
                                               "core.askpass", "core.gitproxy",
                                               "diff.external", NULL};
        size_t k = i + 1;
        const char *key = NULL, *val = NULL;
        size_t valk = 0;
        for (; k < c->argc; k++) {
            const char *a = c->argv[k];
            if (!strcmp(a, "set") && !key)
                continue;
            if (a[0] == '-') {
                if (!strcmp(a, "-f") || !strcmp(a, "--file") || !strcmp(a, "--blob") ||
                    !strcmp(a, "--type") || !strcmp(a, "--comment") || !strcmp(a, "--value"))
                    k++;
                continue;
            }
            if (!key) {
                key = a;
            } else {
                val = a;
                valk = k;
                break;
            }
        }
        if (key && val) {
            bool alias = !strncasecmp(key, "alias.", 6);
            bool runs = false;
            for (size_t r = 0; RUN_KEYS[r] && !runs; r++)
                runs = !strcasecmp(key, RUN_KEYS[r]);
            if (c->argv_flags[valk] & BASH_WORD_EXPANDS && (alias || runs))
                uncertain(p, "a git command built at run time");
            if (alias && val[0] == '!') {
                sub_parse(p, val + 1, strlen(val + 1), false, (long)idx);
            } else if (alias) {
                loom_str t = LOOM_STR_INIT;
                str_puts(&t, "git ");
                str_puts(&t, val);
                sub_parse(p, t.ptr, t.len, false, (long)idx);
                str_free(&t);
            } else if (runs) {
                sub_parse(p, val, strlen(val), false, (long)idx);
            }
        }
        return false;
    }
    if (!strcmp(sub, "bisect")) {
        if (i + 2 < c->argc && !strcmp(c->argv[i + 1], "run"))
            emit_derived(p, idx, i + 2, c->argc, NULL, false, level);
        return false;
    }
    static const char *const FILTERS[] = {"--env-filter", "--tree-filter", "--index-filter",
                                          "--parent-filter", "--msg-filter", "--commit-filter",
                                          "--tag-name-filter", NULL};
    bool rebase = !strcmp(sub, "rebase"), difftool = !strcmp(sub, "difftool"),
         filter = !strcmp(sub, "filter-branch");
    if (!rebase && !difftool && !filter)
        return false;
    for (size_t k = i + 1; k < c->argc; k++) {
        const char *a = c->argv[k];
        if (!strcmp(a, "--"))
            break;
        const char *opt = NULL;   /* the option name that takes a command */
        if (rebase && (!strcmp(a, "--exec") || !strcmp(a, "-x")))
            opt = a;
        else if (difftool && (!strcmp(a, "--extcmd") || !strcmp(a, "-x")))
            opt = a;
        for (size_t f = 0; filter && FILTERS[f] && !opt; f++)
            if (!strcmp(a, FILTERS[f]))
                opt = a;
        if (opt) {
            if (k + 1 < c->argc)
                derive_script(p, c, idx, ++k);
            continue;
        }
        const char *eq = strchr(a, '=');
        bool glued = (rebase && !strncmp(a, "--exec=", 7)) ||
                     (difftool && !strncmp(a, "--extcmd=", 9));
        for (size_t f = 0; filter && FILTERS[f] && !glued; f++)
            glued = eq && (size_t)(eq - a) == strlen(FILTERS[f]) && !strncmp(a, FILTERS[f], eq - a);
        if (rebase && !strncmp(a, "-x", 2) && a[2] && a[1] != '-')
            sub_parse(p, a + 2, strlen(a + 2), false, (long)idx);
        else if (glued)
            sub_parse(p, eq + 1, strlen(eq + 1), false, (long)idx);
    }
    return false;
}

static void derive(parser *p, size_t idx, unsigned level)
{
    if (p->out->aborted)
        return;
    bash_cmd c = p->out->cmds[idx];
    if (c.argc == 0)
        return;
    const char *name = bash_cmd_name(&c);
    if (level >= DERIVE_MAX) {
        uncertain(p, "too many nested command wrappers");
        return;
    }
    derive_assign_commands(p, &c, idx);
    if (derive_script_option(p, &c, idx, name, level))
        return;
    interpreter_code(p, &c, (long)idx, name);
    for (const wrapper *w = WRAPPERS; w->name; w++) {
        if (strcmp(name, w->name))
            continue;
        vec assign = {0};
        bool transparent = w->transparent;
        size_t at = skip_wrapper(p, &c, w, &assign, &transparent);
        if (at < c.argc && (w->kind == W_XARGS || w->kind == W_PARALLEL)) {
            /* The command gets words read at run time: in the place of the
             * replace string (-I{}, parallel's {}), else appended. */
            const char *ph = w->kind == W_PARALLEL ? "{" : NULL;
            for (size_t k = 1; k < at && w->kind == W_XARGS; k++) {
                const char *a = c.argv[k];
                if (!strcmp(a, "-I") && k + 1 < at)
                    ph = c.argv[k + 1];
                else if (!strncmp(a, "-I", 2) && a[2])
                    ph = a + 2;
                else if (!strncmp(a, "-i", 2))
                    ph = a[2] ? a + 2 : "{}";
                else if (!strncmp(a, "--replace", 9))
                    ph = a[9] == '=' ? a + 10 : "{}";
            }
            size_t end = at;
            while (end < c.argc && strncmp(c.argv[end], ":::", 3))
                end++;
            if (w->kind == W_XARGS)
                end = c.argc;
            bool placed = false;
            for (size_t k = at; k < end && ph && *ph; k++)
                placed = placed || strstr(c.argv[k], ph) != NULL;
            if (end == at)
                uncertain(p, "parallel runs its arguments as commands");
            else
                emit_derived_x(p, idx, at, end, &assign, false, level,
                               placed ? 0 : BASH_CMD_MORE_ARGS, placed ? ph : NULL);
        } else if (at >= c.argc && w->kind == W_PARALLEL) {
            uncertain(p, "parallel runs its arguments as commands");
        } else if (at < c.argc)
            emit_derived(p, idx, at, c.argc, &assign, transparent, level);
        else if (w->kind == W_SUDO && assign.n)
            uncertain(p, "sudo with assignments and no command");
        vec_free(&assign);
        return;
    }
    if (!strcmp(name, "find")) {
        for (size_t k = 1; k < c.argc; k++) {
            const char *a = c.argv[k];
            if (strcmp(a, "-exec") && strcmp(a, "-execdir") && strcmp(a, "-ok") &&
                strcmp(a, "-okdir"))
                continue;
            size_t e = k + 1;
            while (e < c.argc && strcmp(c.argv[e], ";") && strcmp(c.argv[e], "+"))
                e++;
            if (e >= c.argc) {
                uncertain(p, "find -exec without ; or +");
                return;
            }
            if (e > k + 1)
                emit_derived_x(p, idx, k + 1, e, NULL, false, level, 0, "{}");
            k = e;
        }
        return;
    }
    if (is_shell(name)) {
        size_t s = shell_script_arg(&c);
        if (!s) {
            if (shell_reads_stdin(&c))
                derive_stdin_script(p, idx, "a shell reads its script from standard input");
            return;
        }
        if (c.argv_flags[s] & BASH_WORD_EXPANDS)
            uncertain(p, "sh -c with a script built at run time");
        sub_parse(p, c.argv[s], strlen(c.argv[s]), false, (long)idx);
        return;
    }
    if (derive_runner(p, &c, idx, name, level))
        return;
    if (!strcmp(name, "alias")) {
        /* alias NAME=TEXT: a later line (with expand_aliases) runs TEXT
         * under the name, so TEXT is read as if it ran here. */
        for (size_t k = 1; k < c.argc; k++) {
            const char *eq = strchr(c.argv[k], '=');
            if (!eq || eq == c.argv[k] || c.argv[k][0] == '-')
                continue;
            if (c.argv_flags[k] & BASH_WORD_EXPANDS)
                uncertain(p, "an alias built at run time");
            sub_parse(p, eq + 1, strlen(eq + 1), false, (long)idx);
        }
        return;
    }
    if ((!strcmp(name, "source") || !strcmp(name, ".")) && c.argc >= 2 &&
        is_stdin_path(c.argv[1])) {
        derive_stdin_script(p, idx, "source reads its script from standard input");
        return;
    }
    if (!strcmp(name, "eval") || !strcmp(name, "su") || !strcmp(name, "watch")) {
        loom_str script = LOOM_STR_INIT;
        size_t from = 1;
        if (!strcmp(name, "eval")) {
            /* eval is used almost only for text built at run time: even
             * when its words are literal, the parse is not trusted. */
            uncertain(p, "eval");
        } else if (!strcmp(name, "su")) {
            from = c.argc;
            for (size_t k = 1; k + 1 < c.argc; k++)
                if (!strcmp(c.argv[k], "-c") || !strcmp(c.argv[k], "--command")) {
                    if (c.argv_flags[k + 1] & BASH_WORD_EXPANDS)
                        uncertain(p, "a command built at run time");
                    str_puts(&script, c.argv[k + 1]);
                    break;
                }
        } else { /* watch [opts] command… run through sh -c */
            while (from < c.argc && c.argv[from][0] == '-') {
                const char *a = c.argv[from];
                if (!strcmp(a, "-n") || !strcmp(a, "--interval") || !strcmp(a, "-q") ||
                    !strcmp(a, "--equexit"))
                    from++;
                else if (!strcmp(a, "-x") || !strcmp(a, "--exec"))
                    uncertain(p, "watch -x");
                from++;
            }
        }
        for (size_t k = from; k < c.argc; k++) {
            if (c.argv_flags[k] & BASH_WORD_EXPANDS)
                uncertain(p, "a command built at run time");
            if (script.len)
                str_putc(&script, ' ');
            str_puts(&script, c.argv[k]);
        }
        if (script.len)
            sub_parse(p, script.ptr, script.len, false, (long)idx);
        str_free(&script);
    }
}

/* ---- the API --------------------------------------------------------- */

bash_cmds *bash_parse_n(const char *cmd, size_t len)
{
    bash_cmds *c = xcalloc(1, sizeof *c);
    arena_init(&c->mem, 0);
    if (!cmd) {
        set_uncertain(c, "no command");
        return c;
    }
    const char *nul = memchr(cmd, '\0', len);
    if (nul) {
        set_uncertain(c, "NUL byte in the command");
        len = (size_t)(nul - cmd);
    }
    parser p = {0};
    p.out = c;
    p.s = cmd;
    p.n = len;
    parse_list(&p, STOP_EOF);
    if (p.nhd)
        set_uncertain(c, "here-document without a body");
    free(p.hd);
    return c;
}

bash_cmds *bash_parse(const char *cmd)
{
    return bash_parse_n(cmd, cmd ? strlen(cmd) : 0);
}

size_t bash_cmds_count(const bash_cmds *c)
{
    return c ? c->n : 0;
}

const bash_cmd *bash_cmds_at(const bash_cmds *c, size_t i)
{
    return c && i < c->n ? &c->cmds[i] : NULL;
}

bool bash_cmds_uncertain(const bash_cmds *c)
{
    return !c || c->uncertain;
}

const char *bash_cmds_why(const bash_cmds *c)
{
    return c && c->uncertain ? c->why : NULL;
}

void bash_cmds_free(bash_cmds *c)
{
    if (!c)
        return;
    arena_free(&c->mem);
    free(c->cmds);
    free(c);
}

bool bash_redir_writes(const bash_redir *r)
{
    switch (r->kind) {
    case BASH_REDIR_OUT: case BASH_REDIR_APPEND: case BASH_REDIR_INOUT:
    case BASH_REDIR_OUT_ALL: case BASH_REDIR_APPEND_ALL:
        return true;
    default:
        return false;
    }
}

bool bash_redir_reads(const bash_redir *r)
{
    return r->kind == BASH_REDIR_IN || r->kind == BASH_REDIR_INOUT;
}

static void put_word(loom_str *s, const char *w)
{
    if (*w && strcspn(w, " \t\n'\"\\$`|&;()<>*?[]{}~#!") == strlen(w)) {
        str_puts(s, w);
        return;
    }
    str_putc(s, '\'');
    for (; *w; w++) {
        if (*w == '\'')
            str_puts(s, "'\\''");
        else
            str_putc(s, *w);
    }
    str_putc(s, '\'');
}

char *bash_cmd_text(const bash_cmd *cmd)
{
    loom_str s = LOOM_STR_INIT;
    for (size_t k = 0; k < cmd->nassign; k++) {
        if (s.len)
            str_putc(&s, ' ');
        /* NAME= stays bare so the text still reads as an assignment. */
        const char *eq = strchr(cmd->assign[k], '=');
        size_t nl = eq ? (size_t)(eq - cmd->assign[k]) + 1 : 0;
        str_append(&s, cmd->assign[k], nl);
        put_word(&s, cmd->assign[k] + nl);
    }
    for (size_t k = 0; k < cmd->argc; k++) {
        if (s.len)
            str_putc(&s, ' ');
        /* A first word with '=' would read back as an assignment. */
        if (k == 0 && strchr(cmd->argv[0], '=')) {
            str_putc(&s, '\'');
            str_puts(&s, cmd->argv[0]);
            str_putc(&s, '\'');
            continue;
        }
        put_word(&s, cmd->argv[k]);
    }
    return str_steal(&s);
}

const char *bash_cmd_name(const bash_cmd *cmd)
{
    if (!cmd->argc)
        return "";
    const char *slash = strrchr(cmd->argv[0], '/');
    return slash && slash[1] ? slash + 1 : cmd->argv[0];
}
