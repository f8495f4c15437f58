/* rule_bash.c — how Bash rules meet a command: the parsed command (shell/
 * bash_parse) is checked simple command by simple command, through the
 * wrappers the parser unwraps (sudo, env, sh -c, xargs, $( ), subshells),
 * with known programs' global options dropped (shell/program_options), the
 * options of a rule read as a set (rm -rf = rm -fr = rm -r -f), and — for
 * deny and ask rules — whatever an expansion or an appended argument could
 * make of the command. The files the command touches are rule_files.c's.
 * rule_bash_check is the answer for one Bash call against a list of rules:
 * a rule set's whole list (rules.c) or one rule on its own (rule.c).
 * Pure; any thread. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/glob.h"
#include "base/str.h"
#include "policy/rule_internal.h"
#include "shell/bash_parse.h"
#include "shell/program_options.h"

/* ---- Bash words ------------------------------------------------------ */

/* The command's words w[0..n) (joined: with spaces) in one spelling
 * against the rule as written: exact, a word prefix, or a '*' glob over
 * the whole text. */
static bool bash_rule_matches(const perm_rule *r, const char *const *w, size_t n, const char *joined)
{
    switch (r->bmode) {
    case BM_EXACT:
    case BM_PREFIX:
        if (n < r->nwords || (r->bmode == BM_EXACT && n != r->nwords))
            return false;
        for (size_t k = 0; k < r->nwords; k++)
            if (strcmp(w[k], r->words[k]))
                return false;
        return true;
    case BM_GLOB:
        return glob_star_match(r->glob, joined, true);
    }
    return false;
}

/* Options the user wrote in a deny or ask rule are a set, not a spelling:
 * Bash(rm -rf:*) also means `rm -r -f x`, `rm -fr x`, `rm -Rf x`,
 * `rm --recursive --force x`, `rm x -rf`; Bash(git push --force:*) also
 * `git push origin main -f`. A rule qualifies when its words are some
 * fixed words (the program and subcommand) followed only by options, and
 * is a prefix rule or exact with nothing after the options. The command
 * must start with the fixed words and carry every option somewhere before
 * "--" (short options in any cluster, long ones also as --opt=VALUE or a
 * unique abbreviation of at least four letters); OPT_SAME maps the long
 * and alternative spellings of a few programs onto one short letter. */
static const struct {
    const char *prog, *sub;   /* sub: "" for the program itself */
    const char *spelling;     /* a long option or another short one */
    char letter;
} OPT_SAME[] = {
    {"rm", "", "--recursive", 'r'}, {"rm", "", "-R", 'r'}, {"rm", "", "--force", 'f'},
    {"cp", "", "--recursive", 'r'}, {"cp", "", "-R", 'r'}, {"cp", "", "--force", 'f'},
    {"chmod", "", "--recursive", 'R'}, {"chown", "", "--recursive", 'R'},
    {"chgrp", "", "--recursive", 'R'}, {"git", "push", "--force", 'f'},
    {"git", "clean", "--force", 'f'}, {"git", "branch", "--force", 'f'},
    {"git", "checkout", "--force", 'f'}, {"git", "add", "--force", 'f'},
    {"git", "rm", "--force", 'f'}, {"git", "rm", "-r", 'r'},
    {"docker", "rm", "--force", 'f'}, {"docker", "rmi", "--force", 'f'},
};

/* The letter the first len bytes of spelling stand for under the fixed
 * words w0 w1, or '\0'. A long option may be abbreviated (getopt takes
 * any unique start: --recur), down to five bytes ("--for"). */
static char opt_letter(const char *w0, const char *w1, const char *spelling, size_t len)
{
    for (size_t k = 0; k < sizeof OPT_SAME / sizeof OPT_SAME[0]; k++) {
        const char *sp = OPT_SAME[k].spelling;
        if (strcmp(OPT_SAME[k].prog, w0) ||
            (OPT_SAME[k].sub[0] && (!w1 || strcmp(OPT_SAME[k].sub, w1))))
            continue;
        if (strlen(sp) == len ? !strncmp(sp, spelling, len)
                              : sp[1] == '-' && len >= 5 && len < strlen(sp) &&
                                    !strncmp(sp, spelling, len))
            return OPT_SAME[k].letter;
    }
    return '\0';
}

static bool is_short_cluster(const char *a)
{
    return a[0] == '-' && a[1] && a[1] != '-';
}

/* Does the command w[0..n) (words after "--" are operands) carry the perm_rule
 * option o, under the fixed words f0 f1? */
static bool cmd_has_option(const char *const *w, size_t from, size_t n, const char *f0,
                           const char *f1, const char *o)
{
    char want = opt_letter(f0, f1, o, strlen(o));
    bool long_opt = o[0] == '-' && o[1] == '-';
    for (size_t k = from; k < n; k++) {
        const char *a = w[k];
        if (!strcmp(a, "--"))
            break;
        if (a[0] != '-' || !a[1])
            continue;
        if (!strcmp(a, o))
            return true;
        if (a[1] == '-') {
            size_t al = strcspn(a, "=");
            if (long_opt && al >= 5 && !strncmp(a, o, al) && (!o[al] || al < strlen(o)))
                return true;   /* --force, --force=x, --forc */
            char l = opt_letter(f0, f1, a, al);
            if (l && (l == want || (!long_opt && !o[2] && l == o[1])))
                return true;
            continue;
        }
        if (is_short_cluster(a)) {
            char alt[3] = {'-', 0, 0};
            for (const char *c = a + 1; *c; c++) {
                alt[1] = *c;
                char l = opt_letter(f0, f1, alt, 2);
                if (!l)
                    l = *c;
                if (want && l == want)
                    return true;
                if (!long_opt && !o[2] && (l == o[1] || *c == o[1]))
                    return true;
            }
        }
    }
    return false;
}

static bool option_set_matches(const perm_rule *r, const char *const *w, size_t n)
{
    if (r->bmode == BM_GLOB || r->nwords < 2)
        return false;
    size_t nfix = 0;
    while (nfix < r->nwords && !(r->words[nfix][0] == '-' && r->words[nfix][1]))
        nfix++;
    if (nfix == 0 || nfix == r->nwords || n < nfix)
        return false;
    for (size_t k = nfix; k < r->nwords; k++)
        if (r->words[k][0] != '-' || !strcmp(r->words[k], "--"))
            return false;   /* an operand after the options: a spelling, keep it */
    for (size_t k = 0; k < nfix; k++)
        if (strcmp(w[k], r->words[k]))
            return false;
    const char *f1 = nfix > 1 ? r->words[1] : NULL;
    for (size_t k = nfix; k < r->nwords; k++) {
        const char *o = r->words[k];
        if (is_short_cluster(o) && o[2]) {   /* -rf: each letter */
            char one[3] = {'-', 0, 0};
            for (const char *c = o + 1; *c; c++) {
                one[1] = *c;
                if (!cmd_has_option(w, nfix, n, r->words[0], f1, one))
                    return false;
            }
        } else if (!cmd_has_option(w, nfix, n, r->words[0], f1, o)) {
            return false;
        }
    }
    if (r->bmode == BM_EXACT)
        for (size_t k = nfix; k < n; k++)
            if (w[k][0] != '-')
                return false;   /* exact: options only, no operand */
    return true;
}

/* Could some text that starts with s match the '*' pattern p? True when
 * all of s is consumed by a prefix of p: what the shell adds after s
 * (an expansion's value, more words) can then supply the rest. */

/* A word the shell turns into something the text does not show: an
 * expansion ($x, $(…)) or an unquoted glob. */
static bool vague_word(unsigned flags)
{
    return (flags & (BASH_WORD_EXPANDS | BASH_WORD_GLOB)) != 0;
}


/* The bytes of a vague word before its first expansion or glob character
 * are fixed text: whatever the word becomes, its first resulting word
 * starts with them ("P=$PATH" can never become "tight"). A quoted '$' or
 * '*' also stops the prefix, which only makes it shorter (stricter). */
static size_t fixed_prefix_len(const char *w, unsigned flags)
{
    /* A run-time placeholder (xargs -I %, find -exec {}) is flagged as an
     * expansion without a '$' to show where: nothing of it is fixed. */
    if ((flags & BASH_WORD_EXPANDS) && !strpbrk(w, "$`"))
        return 0;
    return strcspn(w, "$`*?[{");
}

/* Could the command w[0..n) (flags per word) be one that rule r matches,
 * once its vague words are expanded? The words before the first vague one
 * must match as written; the vague word may become anything (several words
 * too, or none), except that a glob without expansions can only become
 * names it matches. more: arguments are appended at run time (xargs). */
static bool could_match(const perm_rule *r, const char *const *w, const unsigned *fl, size_t n,
                        bool more)
{
    size_t v = 0;
    while (v < n && !vague_word(fl[v]))
        v++;
    if (v == n && !more)
        return false;
    if (r->bmode == BM_GLOB) {
        loom_str pre = LOOM_STR_INIT;
        str_puts(&pre, "");
        for (size_t k = 0; k < v; k++) {
            str_puts(&pre, w[k]);
            str_putc(&pre, ' ');
        }
        if (v < n)
            str_append(&pre, w[v], fixed_prefix_len(w[v], fl[v]));
        /* "git " + anything: the rule could match if it could continue
         * what is known; at the very start (v == 0) everything could. */
        if (v == n && pre.len)
            pre.ptr[--pre.len] = '\0';
        bool m = glob_star_prefix(r->glob, pre.ptr);
        str_free(&pre);
        return m;
    }
    for (size_t k = 0; k < v && k < r->nwords; k++)
        if (strcmp(w[k], r->words[k]))
            return false;
    if (v < n && v < r->nwords && !(fl[v] & BASH_WORD_EXPANDS) &&
        !glob_segment_match(w[v], strlen(w[v]), r->words[v], strlen(r->words[v])))
        return false;   /* a plain glob that cannot name the rule's word */
    if (v < n && v < r->nwords && !strchr(r->words[v], '*')) {
        size_t fp = fixed_prefix_len(w[v], fl[v]), rl = strlen(r->words[v]);
        if (strncmp(w[v], r->words[v], fp < rl ? fp : rl) != 0 || fp > rl)
            return false;   /* its fixed start already differs from the rule's word */
    }
    if (v >= r->nwords && r->bmode == BM_EXACT) {
        /* Exact: the rest must be able to vanish or to be the rule. */
        for (size_t k = r->nwords; k < n; k++)
            if (!vague_word(fl[k]))
                return false;
        if (v == n && more)
            return true;
    }
    return v < n || more;
}

/* The program a Bash rule is about ("git" for Bash(git push:*)), for
 * "any subcommand of it"; NULL when the rule starts with a wildcard. */
static bool rule_is_for_program(const perm_rule *r, const char *name)
{
    if (r->bmode == BM_GLOB) {
        loom_str pre = LOOM_STR_INIT;
        str_puts(&pre, name);
        str_putc(&pre, ' ');
        bool m = glob_star_prefix(r->glob, pre.ptr);
        str_free(&pre);
        return m;
    }
    return r->nwords > 0 && !strcmp(r->words[0], name);
}

void rule_form_make(cmd_form *f, const bash_cmd *c, bool with_assign, bool basename0)
{
    f->n = (with_assign ? c->nassign : 0) + c->argc;
    f->w = xmalloc((f->n + 1) * sizeof *f->w);
    size_t k = 0;
    if (with_assign)
        for (size_t a = 0; a < c->nassign; a++)
            f->w[k++] = c->assign[a];
    for (size_t a = 0; a < c->argc; a++)
        f->w[k++] = a == 0 && basename0 ? bash_cmd_name(c) : c->argv[a];
    f->w[k] = NULL;
    loom_str j = LOOM_STR_INIT;
    for (size_t a = 0; a < f->n; a++) {
        if (a)
            str_putc(&j, ' ');
        str_puts(&j, f->w[a]);
    }
    f->joined = str_steal(&j);
}

void rule_form_free(cmd_form *f)
{
    free(f->w);
    free(f->joined);
}


/* ---- parsing Bash(spec) ------------------------------------------------- */

int rule_bash_parse_spec(perm_rule *r, const char *spec, const char *text, loom_error *err)
{
    size_t sl = strlen(spec);
    bool prefix = sl >= 2 && !strcmp(spec + sl - 2, ":*");
    char *body = xstrndup(spec, prefix ? sl - 2 : sl);
    /* "ls *": the legacy spelling of "ls:*" */
    size_t bl = strlen(body);
    if (!prefix && bl >= 2 && !strcmp(body + bl - 2, " *") && strchr(body, '*') == body + bl - 1) {
        body[bl - 2] = '\0';
        prefix = true;
    }
    int rc = 0;
    bash_cmds *pc = bash_parse(body);
    const bash_cmd *first = NULL;
    size_t top = 0;
    for (size_t k = 0; k < bash_cmds_count(pc); k++)
        if (!(bash_cmds_at(pc, k)->flags & (BASH_CMD_DERIVED | BASH_CMD_SUBST))) {
            top++;
            if (!first)
                first = bash_cmds_at(pc, k);
        }
    bool uncertain_ok = bash_cmds_uncertain(pc) && bash_cmds_why(pc) &&
                        !strcmp(bash_cmds_why(pc), "the command name is an expansion");
    if (!*body || !first) {
        rc = rule_bad(err, text, "the command is empty");
    } else if (bash_cmds_uncertain(pc) && !uncertain_ok) {
        char why[200];
        snprintf(why, sizeof why, "cannot read the command (%s)", bash_cmds_why(pc));
        rc = rule_bad(err, text, why);
    } else if (top != 1 || first->nredir) {
        rc = rule_bad(err, text,
                 "a Bash rule matches one simple command: no ;, &&, ||, |, & or "
                 "redirections (write one rule per command)");
    } else {
        cmd_form f;
        rule_form_make(&f, first, true, false);
        if (strchr(f.joined, '*') && !prefix) {
            r->bmode = BM_GLOB;
            r->glob = xstrdup(f.joined);
        } else if (strchr(f.joined, '*')) {
            rc = rule_bad(err, text, "use either a ':*' suffix or '*' wildcards, not both");
        } else {
            r->bmode = prefix ? BM_PREFIX : BM_EXACT;
            r->nwords = f.n;
            r->words = xmalloc((f.n ? f.n : 1) * sizeof *r->words);
            for (size_t k = 0; k < f.n; k++)
                r->words[k] = xstrdup(f.w[k]);
        }
        rule_form_free(&f);
    }
    bash_cmds_free(pc);
    free(body);
    return rc;
}


/* ---- one command against the rules ------------------------------------- */

static void hit_rule(bash_state *st, const perm_rule *r, const char *why)
{
    const perm_rule **slot = r->verdict == PERM_DENY ? &st->deny : &st->ask;
    char *buf = r->verdict == PERM_DENY ? st->deny_why : st->ask_why;
    const perm_rule *was = *slot;
    *slot = rule_better(*slot, r);
    if (*slot != was || (was == r && why == NULL))
        snprintf(buf, sizeof st->deny_why, "%s", why ? why : "");
}

/* The rule's text, and when the command only could be what it names, why. */
static void set_match_why(rule_match *m, perm_verdict v, const perm_rule *r, const char *why)
{
    rule_set_match(m, v, r);
    if (why && *why) {
        size_t n = strlen(m->rule);
        snprintf(m->rule + n, sizeof m->rule - n, " (%s)", why);
        /* Cut short, the text may end inside a UTF-8 sequence (the command
         * is the model's text); it goes into JSON, so the piece goes. */
        size_t len = strlen(m->rule);
        if (len + 1 == sizeof m->rule) {
            size_t i = len;
            while (i > 0 && ((unsigned char)m->rule[i - 1] & 0xC0) == 0x80)
                i--;
            if (i > 0 && (unsigned char)m->rule[i - 1] >= 0xC0) {
                unsigned char lead = (unsigned char)m->rule[i - 1];
                size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
                if (len - (i - 1) < want)
                    m->rule[i - 1] = '\0';
            }
        }
    }
}

/* Does text spell the most specific literal part of path rule r's pattern
 * (".env" of Edit(.env), "secrets" of Write(secrets/<anything>), ".pem" of
 * a Read rule for every *.pem)? The longest run without wildcards in the
 * last segment that has one of at least two bytes. */
static bool path_rule_named_in(const perm_rule *r, const char *text)
{
    const char *pat = r->pattern ? r->pattern : "";
    size_t end = strlen(pat);
    while (end > 0) {
        size_t start = end;
        while (start > 0 && pat[start - 1] != '/')
            start--;
        size_t best = 0, best_at = 0;
        for (size_t i = start; i < end;) {
            size_t n = strcspn(pat + i, "*?[]{}/");
            if (i + n > end)
                n = end - i;
            if (n > best) {
                best = n;
                best_at = i;
            }
            i += n ? n : 1;
        }
        if (best >= 2) {
            char tok[256];
            snprintf(tok, sizeof tok, "%.*s", (int)(best < 255 ? best : 255), pat + best_at);
            return strstr(text, tok) != NULL;
        }
        end = start ? start - 1 : 0;
    }
    return false;
}

/* The rules v[0..n) against one simple command c: deny and ask rules are
 * noted in st, the allow rule that covers it goes to *direct. */
static void match_cmd(bash_state *st, const bash_cmd *c, const perm_rule **direct)
{
    cmd_form full, bare, base;
    rule_form_make(&full, c, true, false);
    rule_form_make(&base, c, false, true);
    rule_form_make(&bare, c, false, false);
    /* Global options of known programs dropped: git -C . push reads
     * as git push for deny and ask rules. */
    prog_norm pn;
    program_options_normalize(bash_cmd_name(c), c->argv, c->argc, c->assign, c->nassign, &pn);
    const char **nw = xmalloc((pn.n + 1) * sizeof *nw);
    unsigned *nf = xmalloc((pn.n + 1) * sizeof *nf);
    loom_str nj = LOOM_STR_INIT;
    str_puts(&nj, "");
    for (size_t k = 0; k < pn.n; k++) {
        nw[k] = base.w[pn.keep[k]];
        nf[k] = c->argv_flags[pn.keep[k]];
        if (k)
            str_putc(&nj, ' ');
        str_puts(&nj, nw[k]);
    }
    bool more = (c->flags & BASH_CMD_MORE_ARGS) != 0;
    char whybuf[300];
    for (size_t q = 0; q < st->n; q++) {
        const perm_rule *r = st->v[q];
        bool hit;
        const char *why = NULL;
        if (r->kind == RK_TOOL && !strcmp(r->tool, "Bash"))
            hit = true;
        else if (r->kind != RK_BASH)
            continue;
        else if (r->verdict == PERM_ALLOW)
            hit = bash_rule_matches(r, full.w, full.n, full.joined);
        else {
            hit = bash_rule_matches(r, full.w, full.n, full.joined) ||
                  bash_rule_matches(r, bare.w, bare.n, bare.joined) ||
                  bash_rule_matches(r, base.w, base.n, base.joined) ||
                  (pn.changed && bash_rule_matches(r, nw, pn.n, str_cstr(&nj))) ||
                  option_set_matches(r, base.w, base.n) ||
                  (pn.changed && option_set_matches(r, nw, pn.n));
            if (!hit && (could_match(r, base.w, c->argv_flags, base.n, more) ||
                         could_match(r, nw, nf, pn.n, more))) {
                hit = true;
                char *t = bash_cmd_text(c);
                snprintf(whybuf, sizeof whybuf, "%s could be it: %s", t,
                         more ? "its wrapper adds arguments at run time"
                              : "a word is expanded at run time");
                free(t);
                why = whybuf;
            }
            if (!hit && pn.unsure && rule_is_for_program(r, bash_cmd_name(c))) {
                hit = true;
                snprintf(whybuf, sizeof whybuf, "%s could be any %s subcommand: %s",
                         bash_cmd_name(c), bash_cmd_name(c), pn.why);
                why = whybuf;
            }
        }
        if (!hit)
            continue;
        if (r->verdict == PERM_DENY || r->verdict == PERM_ASK)
            hit_rule(st, r, why);
        else
            *direct = rule_better(*direct, r);
    }
    str_free(&nj);
    free(nw);
    free(nf);
    prog_norm_free(&pn);
    rule_form_free(&full);
    rule_form_free(&bare);
    rule_form_free(&base);
}

/* Fail closed: a command the parser cannot follow could be any of the
 * commands the deny and ask rules name. */
static void uncertain_hits(bash_state *st, const bash_cmds *pc, const char *command)
{
    char whybuf[300];
    snprintf(whybuf, sizeof whybuf, "the command could run it: cannot parse it for sure, %s",
             bash_cmds_why(pc) ? bash_cmds_why(pc) : "unknown reason");
    for (size_t q = 0; q < st->n; q++) {
        const perm_rule *r = st->v[q];
        if (r->kind == RK_BASH && r->verdict != PERM_ALLOW)
            hit_rule(st, r, whybuf);
    }
    /* A path deny/ask rule whose name the unparsed text spells out
     * (`echo 'rm .env' | sh` with Edit(.env) denied) could be what it
     * touches: the rule applies, in every mode. */
    char pwhy[300];
    snprintf(pwhy, sizeof pwhy, "the command names it and cannot be parsed for sure, %s",
             bash_cmds_why(pc) ? bash_cmds_why(pc) : "unknown reason");
    for (size_t q = 0; q < st->n; q++) {
        const perm_rule *r = st->v[q];
        if (r->kind == RK_PATH && r->verdict != PERM_ALLOW && r->fam != FAM_SELF &&
            path_rule_named_in(r, command))
            hit_rule(st, r, pwhy);
    }
}

/* No deny or ask rule met the command: is every part of it allowed? A
 * command is covered when a rule allows it, when a rule allows the wrapper
 * it came from (sudo X allowed ⇒ X), or when it is a transparent wrapper
 * around an allowed command (timeout 5 X). */
static void answer_allow(const bash_state *st, const bash_cmds *pc, const perm_rule **direct,
                         const perm_rule *bare_allow, bool specific_denies, perm_check_detail *out)
{
    size_t n = bash_cmds_count(pc);
    bool *down = xcalloc(n ? n : 1, sizeof *down), *up = xcalloc(n ? n : 1, sizeof *up);
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        down[i] = direct[i] || (c->parent >= 0 && down[c->parent]);
    }
    for (size_t i = n; i-- > 0;) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        up[i] = up[i] || direct[i];
        if (up[i] && c->parent >= 0 && (c->flags & BASH_CMD_TRANSPARENT))
            up[c->parent] = true;
    }
    long first_uncovered = -1;
    loom_str used = LOOM_STR_INIT;
    const perm_rule *first_rule = NULL;
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        bool empty = c->argc == 0 && c->nassign == 0;
        if (!(empty || down[i] || up[i]) && first_uncovered < 0)
            first_uncovered = (long)i;
        if (!direct[i])
            continue;
        any = true;
        if (!first_rule)
            first_rule = direct[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = direct[j] && !strcmp(direct[j]->text, direct[i]->text);
        if (!seen) {
            if (used.len)
                str_puts(&used, " + ");
            str_puts(&used, direct[i]->text);
        }
    }
    /* A write outside the workspace is not covered by a rule about the
     * command (only the bare Bash rule, or an Edit/Write allow rule for
     * that path, allows it), the same as for the Write tool. */
    bool outside = st->outside[0] && !bare_allow;
    bool all = n > 0 && first_uncovered < 0 && !out->uncertain && !st->blocked[0] && !outside;
    /* The bare Bash rule allows everything, unparseable text too, as
     * long as no Bash(...) or path deny/ask rule could hide in it. */
    if (!all && bare_allow && !specific_denies && !st->has_path_rules[0] &&
        !st->has_path_rules[1] && n > 0) {
        all = true;
        str_clear(&used);
        str_puts(&used, bare_allow->text);
        first_rule = bare_allow;
    }
    out->match.verdict = all ? PERM_ALLOW : PERM_NONE;
    out->match.source = first_rule ? first_rule->source : RULE_SRC_USER;
    snprintf(out->match.rule, sizeof out->match.rule, "%s", str_cstr(&used));
    out->partial = !all && any;
    if (!all) {
        if (first_uncovered >= 0) {
            char *t = bash_cmd_text(bash_cmds_at(pc, (size_t)first_uncovered));
            snprintf(out->uncovered, sizeof out->uncovered, "%s", t);
            free(t);
        } else if (out->uncertain) {
            snprintf(out->uncovered, sizeof out->uncovered, "cannot parse the command for sure: %s",
                     bash_cmds_why(pc));
        } else if (st->blocked[0]) {
            snprintf(out->uncovered, sizeof out->uncovered, "%s", st->blocked);
        } else if (outside) {
            snprintf(out->uncovered, sizeof out->uncovered, "%s", st->outside);
        } else if (n == 0) {
            snprintf(out->uncovered, sizeof out->uncovered, "no command");
        }
    }
    str_free(&used);
    free(down);
    free(up);
}

void rule_bash_check(const perm_rule *const *v, size_t nrules, const char *command, const char *cwd,
                     const char *root, perm_check_detail *out)
{
    bash_state st = {.v = v, .n = nrules, .cwd = cwd, .root = root};
    st.cwd_real = perm_resolve_path(".", cwd);
    bool specific_denies = false;   /* Bash(...) deny/ask rules exist */
    const perm_rule *bare_allow = NULL;
    for (size_t q = 0; q < nrules; q++) {
        const perm_rule *r = v[q];
        if (rule_in_family(r, FAM_EDIT))
            st.has_path_rules[1] = true;
        if (rule_in_family(r, FAM_READ))
            st.has_path_rules[0] = true;
        if (r->kind == RK_BASH && r->verdict != PERM_ALLOW)
            specific_denies = true;
        if (r->kind == RK_TOOL && !strcmp(r->tool, "Bash") && r->verdict == PERM_ALLOW)
            bare_allow = rule_better(bare_allow, r);
    }

    bash_cmds *pc = bash_parse(command);
    size_t n = bash_cmds_count(pc);
    const perm_rule **direct = xcalloc(n ? n : 1, sizeof *direct);
    dirset ds = {0};
    ds.d[ds.n++] = xstrdup(cwd);
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *c = bash_cmds_at(pc, i);
        match_cmd(&st, c, &direct[i]);
        rule_files_check_cmd(&st, &ds, c);
        rule_files_track_cd(&ds, c);
    }
    if (bash_cmds_uncertain(pc))
        uncertain_hits(&st, pc, command);

    out->uncertain = bash_cmds_uncertain(pc);
    if (st.deny)
        set_match_why(&out->match, PERM_DENY, st.deny, st.deny_why);
    else if (st.ask)
        set_match_why(&out->match, PERM_ASK, st.ask, st.ask_why);
    else
        answer_allow(&st, pc, direct, bare_allow, specific_denies, out);
    for (size_t k = 0; k < ds.n; k++)
        free(ds.d[k]);
    rule_files_state_free(&st);
    free(direct);
    bash_cmds_free(pc);
}
