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
 * The commands that run their arguments (sudo X, sh -c X, xargs X, …) are
 * unwrapped in bash_wrappers.c, through bash_parse_internal.h.
 *
 * Size: over 1,000 lines because it is one recursive-descent parser kept
 * whole: the lexer and the parser call each other ($( … ), backticks and
 * <( … ) are lexed by running the grammar, here-documents are read by the
 * lexer when the parser meets a newline), so cutting it in two would only
 * put one mutual recursion across a file boundary. What sits on top of the
 * grammar — the wrapper unwrapping — lives in bash_wrappers.c.
 *
 * Threading: a parse runs on the caller's thread; parses share nothing.
 */
#include "shell/bash_parse.h"
#include "shell/bash_parse_internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/str.h"

/* if/while/for/case nesting inside one list. */
#define KEYWORD_MAX 64

enum {
    OP_AND = 1, OP_OR, OP_SEMI, OP_DSEMI, OP_SEMI_AMP, OP_DSEMI_AMP,
    OP_PIPE, OP_PIPE_AMP, OP_AMP, OP_LPAREN, OP_RPAREN
};
/* Redirection operators before their target tells them apart. */
enum { R_DUP_IN = 100, R_DUP_OUT };

typedef enum { STOP_EOF, STOP_RPAREN, STOP_RBRACE, STOP_CASE } stop_at;

static void parse_list(parser *p, stop_at stop);
static void next(parser *p, token *t);
static void lex_dollar(parser *p, loom_str *v, unsigned *fl, bool in_dq);
static void lex_backtick(parser *p, loom_str *v, unsigned *fl);
static void lex_dquote(parser *p, loom_str *v, unsigned *fl);

/* ---- bookkeeping ------------------------------------------------------ */

static void set_uncertain(bash_cmds *out, const char *why)
{
    if (!out->uncertain)
        snprintf(out->why, sizeof out->why, "%s", why);
    out->uncertain = true;
}

void bp_uncertain(parser *p, const char *why)
{
    set_uncertain(p->out, why);
}

/* Stops the whole parse: what was found so far stays, marked uncertain. */
static void abort_parse(parser *p, const char *why)
{
    bp_uncertain(p, why);
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
bool bp_assign_prefix(const char *v, size_t n)
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
                        bp_uncertain(p, "command substitution in a here-document");
                        break;
                    }
            }
        }
        if (!found)
            bp_uncertain(p, "here-document without its terminator");
    }
    p->nhd = 0;
}

/* Parses text as a command list of its own (backticks, sh -c, eval):
 * its commands are recorded with the current context; with parent >= 0
 * they are marked as derived from that command. */
void bp_sub_parse(parser *p, const char *text, size_t len, bool subst, long parent)
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
        bp_uncertain(p, "here-document without a body");
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
            bp_uncertain(p, "command substitution inside arithmetic");
        } else if (c == '\\' && j + 1 < p->n) {
            j++;
        }
        j++;
    }
    bp_uncertain(p, "unterminated (( ))");
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
                bp_uncertain(p, "unterminated ' inside ${ }");
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
        bp_uncertain(p, "unterminated ${");
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
            int d;
            while (k < max && p->i < p->n && (d = str_hex_digit((unsigned char)p->s[p->i])) >= 0) {
                p->i++;
                val = val * 16 + (unsigned)d;
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
    bp_uncertain(p, "unterminated $'");
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
        bp_uncertain(p, "unterminated `");
    bp_sub_parse(p, str_cstr(&body), body.len, true, -1);
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
        bp_uncertain(p, "unterminated \"");
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
                bp_uncertain(p, "unterminated quote in an array");
                p->i = p->n;
                break;
            }
            p->i = (size_t)(q - p->s) + 1;
            continue;
        }
        if (c == '`' || (c == '$' && peek(p, 1) == '('))
            bp_uncertain(p, "command substitution in an array assignment");
        p->i++;
        if (c == '(')
            depth++;
        else if (c == ')' && --depth == 0)
            break;
    }
    if (depth > 0)
        bp_uncertain(p, "unterminated array assignment");
    str_append(v, p->s + st, p->i - st);
}

/* <( … ) or >( … ): p->i at the '<' or '>'. */
static void lex_procsubst(parser *p, loom_str *v, unsigned *fl)
{
    size_t st = p->i;
    bp_uncertain(p, "process substitution");
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
                bp_uncertain(p, "unterminated '");
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
            if (!assign && !quoted_so_far && !(fl & BASH_WORD_EXPANDS) &&
                bp_assign_prefix(v.ptr, v.len))
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
long bp_emit(parser *p, const vec *argv, const vec *assign, bash_redir *redir, size_t nredir,
             unsigned flags)
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
        bp_uncertain(p, "the command name is an expansion");
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
        bp_uncertain(p, "redirection without a target");
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
        bp_emit(p, &none, &none, rs, nr, 0);
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
        bp_uncertain(p, "function body is not a { } or ( ) group");
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
                bp_vec_push(&assign, t.text, t.wflags);
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
                        bp_uncertain(p, "unexpected (");
                        pushback(p, &w);
                    }
                    goto out;
                }
                pushback(p, &u);
            }
            bp_vec_push(&argv, t.text, t.wflags);
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
                bp_uncertain(p, "unexpected (");
            pushback(p, &t);
            break;
        }
    }
    if (argv.n || assign.n || nr) {
        long idx = bp_emit(p, &argv, &assign, rs, nr, 0);
        if (idx >= 0)
            bp_derive(p, (size_t)idx, 0);
    }
out:
    bp_vec_free(&argv);
    bp_vec_free(&assign);
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
                bp_uncertain(p, "| without a command after it");
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
            bp_uncertain(p, "malformed for (( ))");
        return;
    }
    if (t.kind != TK_WORD) {
        bp_uncertain(p, "for without a name");
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
        bp_uncertain(p, "malformed for … in");
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
        bp_uncertain(p, "case without a word");
        pushback(p, &t);
        return;
    }
    do
        next(p, &t);
    while (t.kind == TK_NEWLINE);
    if (!word_is(&t, "in")) {
        bp_uncertain(p, "case without in");
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
            bp_uncertain(p, "missing esac");
            return;
        }
        if (t.kind == TK_OP && t.op == OP_LPAREN)
            next(p, &t);
        for (;;) {
            if (t.kind != TK_WORD) {
                bp_uncertain(p, "malformed case pattern");
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
            bp_uncertain(p, "malformed case pattern");
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
            bp_uncertain(p, "missing ]]");
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
            bp_uncertain(p, "then/else without if");
    } else if (!strcmp(w, "do")) {
        if (top != 'l')
            bp_uncertain(p, "do without while/for");
    } else if (!strcmp(w, "fi") || !strcmp(w, "done")) {
        if (top != (w[0] == 'f' ? 'i' : 'l'))
            bp_uncertain(p, "fi/done without its opening word");
        else
            (*nks)--;
        compound_redirs(p);
    } else if (!strcmp(w, "case")) {
        parse_case(p);
    } else if (!strcmp(w, "function")) {
        token name;
        next(p, &name);
        if (name.kind != TK_WORD) {
            bp_uncertain(p, "function without a name");
            pushback(p, &name);
            return false;
        }
        token u;
        next(p, &u);
        if (u.kind == TK_OP && u.op == OP_LPAREN) {
            next(p, &u);
            if (!(u.kind == TK_OP && u.op == OP_RPAREN)) {
                bp_uncertain(p, "unexpected (");
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
        bp_uncertain(p, "} without {");
    } else if (!strcmp(w, "esac")) {
        if (stop == STOP_CASE) {
            pushback(p, t);
            return true;
        }
        bp_uncertain(p, "esac without case");
    } else if (!strcmp(w, "[[")) {
        parse_cond(p);
    } else if (!strcmp(w, "time")) {
        token u;
        next(p, &u);
        if (!word_is(&u, "-p"))
            pushback(p, &u);
    } else if (!strcmp(w, "]]") || !strcmp(w, "in")) {
        bp_uncertain(p, "unexpected reserved word");
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
                bp_uncertain(p, "missing )");
            else if (stop == STOP_RBRACE)
                bp_uncertain(p, "missing }");
            else if (stop == STOP_CASE)
                bp_uncertain(p, "missing ;; or esac");
            else if (need)
                bp_uncertain(p, "the command ends with an operator");
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
                    bp_uncertain(p, "; without a command before it");
                after = false;
                continue;
            case OP_AMP:
                if (need || !after)
                    bp_uncertain(p, "& without a command before it");
                for (size_t k = last; k < p->out->n; k++)
                    p->out->cmds[k].flags |= BASH_CMD_BACKGROUND;
                after = false;
                continue;
            case OP_AND: case OP_OR: case OP_PIPE: case OP_PIPE_AMP:
                if (need || !after)
                    bp_uncertain(p, "an operator without a command before it");
                need = true;
                continue;
            case OP_RPAREN:
                if (stop == STOP_RPAREN)
                    goto done;
                bp_uncertain(p, "unexpected )");
                continue;
            case OP_DSEMI: case OP_SEMI_AMP: case OP_DSEMI_AMP:
                if (stop == STOP_CASE)
                    goto done;
                bp_uncertain(p, "unexpected ;;");
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
            bp_uncertain(p, "unexpected token");
        }
    }
done:
    if (nks)
        bp_uncertain(p, "if/while/for without its closing word");
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
