/* rules.c — rule sets: the allow, ask and deny lists of the settings and
 * the command line, and what a set says about one tool call (rules.h has
 * the contract). Each rule is parsed and matched by rule.c / rule_bash.c;
 * this file owns the lists, the precedence between verdicts and sources,
 * and the answer's wording. A set is immutable once built; checking it is
 * pure and safe from many threads. */
#include "policy/rules.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "policy/rule_internal.h"

struct perm_rules {
    /* "Allow always" adds a rule while other calls check theirs (parallel
     * tool calls, sub-agents sharing the session's rules): readers share,
     * an addition waits for them. */
    pthread_rwlock_t lock;
    perm_rule **v;
    size_t n, cap;
};

/* Higher source wins the report; between equals, the rule added first. */
const perm_rule *rule_better(const perm_rule *a, const perm_rule *b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (a->source != b->source)
        return a->source > b->source ? a : b;
    return a->order <= b->order ? a : b;
}

void rule_set_match(rule_match *m, perm_verdict v, const perm_rule *r)
{
    m->verdict = v;
    m->rule[0] = '\0';
    m->source = RULE_SRC_USER;
    if (r) {
        snprintf(m->rule, sizeof m->rule, "%s", r->text);
        m->source = r->source;
    }
}

perm_rules *perm_rules_new(void)
{
    perm_rules *r = xcalloc(1, sizeof(perm_rules));
    pthread_rwlock_init(&r->lock, NULL);
    return r;
}

void perm_rules_free(perm_rules *r)
{
    if (!r)
        return;
    for (size_t k = 0; k < r->n; k++)
        rule_free(r->v[k]);
    free(r->v);
    pthread_rwlock_destroy(&r->lock);
    free(r);
}

size_t perm_rules_count(const perm_rules *r)
{
    if (!r)
        return 0;
    pthread_rwlock_rdlock((pthread_rwlock_t *)&r->lock);
    size_t n = r->n;
    pthread_rwlock_unlock((pthread_rwlock_t *)&r->lock);
    return n;
}

int perm_rules_add(perm_rules *rs, perm_verdict verdict, const char *rule_text, rule_source source,
                   loom_error *err)
{
    if (!rule_text)
        return loom_error_set(err, LOOM_ERR_CONFIG, "permission rule: missing text");
    if (verdict != PERM_ALLOW && verdict != PERM_ASK && verdict != PERM_DENY)
        return loom_error_set(err, LOOM_ERR_CONFIG, "permission rule \"%s\": %s", rule_text,
                              "a rule belongs to allow, ask or deny");
    perm_rule *r = rule_parse(rule_text, 0, err);
    if (!r)
        return -LOOM_ERR_CONFIG;
    r->verdict = verdict;
    r->source = source;
    pthread_rwlock_wrlock(&rs->lock);
    r->order = rs->n;
    if (rs->n == rs->cap) {
        rs->cap = rs->cap ? rs->cap * 2 : 16;
        rs->v = xrealloc(rs->v, rs->cap * sizeof *rs->v);
    }
    rs->v[rs->n++] = r;
    pthread_rwlock_unlock(&rs->lock);
    return 0;
}

static void check_plain(const perm_rules *rs, const char *tool, const json_t *input,
                        const char *cwd, perm_check_detail *out)
{
    rule_path_forms pf = {0};
    bool have_pf = false;
    const char *path = rule_is_path_tool(tool) ? rule_tool_path(tool, input, cwd) : NULL;
    if (path) {
        rule_path_forms_make(&pf, path, cwd);
        have_pf = true;
    }
    char *host = NULL;
    if (!strcmp(tool, "WebFetch")) {
        const char *url = json_string_value(json_object_get(input, "url"));
        host = url ? rule_url_host(url) : NULL;
    }
    const perm_rule *best[4] = {0};
    for (size_t k = 0; k < rs->n; k++) {
        const perm_rule *r = rs->v[k];
        if (rule_call_matches(r, tool, input, cwd, NULL, have_pf ? &pf : NULL, host))
            best[r->verdict] = rule_better(best[r->verdict], r);
    }
    if (best[PERM_DENY])
        rule_set_match(&out->match, PERM_DENY, best[PERM_DENY]);
    else if (best[PERM_ASK])
        rule_set_match(&out->match, PERM_ASK, best[PERM_ASK]);
    else if (best[PERM_ALLOW])
        rule_set_match(&out->match, PERM_ALLOW, best[PERM_ALLOW]);
    if (have_pf && !pf.resolved)
        snprintf(out->uncovered, sizeof out->uncovered, "%.200s: symlink loop", path);
    free(host);
    if (have_pf)
        rule_path_forms_free(&pf);
}

void perm_rules_check_detail(const perm_rules *rs, const char *tool_name, const json_t *input,
                             const char *cwd, perm_check_detail *out)
{
    memset(out, 0, sizeof *out);
    out->match.verdict = PERM_NONE;
    if (!rs || !tool_name)
        return;
    char cwdbuf[PATH_MAX];
    if (!cwd || !*cwd)
        cwd = getcwd(cwdbuf, sizeof cwdbuf) ? cwdbuf : "/";
    pthread_rwlock_t *lock = (pthread_rwlock_t *)&rs->lock; /* the rules stay as they are */
    pthread_rwlock_rdlock(lock);
    const char *cmd = !strcmp(tool_name, "Bash")
                          ? json_string_value(json_object_get(input, "command"))
                          : NULL;
    if (cmd)
        rule_bash_check((const perm_rule *const *)rs->v, rs->n, cmd, cwd, NULL, out);
    else
        check_plain(rs, tool_name, input, cwd, out);
    pthread_rwlock_unlock(lock);
}

rule_match perm_rules_check(const perm_rules *rs, const char *tool_name, const json_t *input,
                            const char *cwd)
{
    perm_check_detail d;
    perm_rules_check_detail(rs, tool_name, input, cwd, &d);
    return d.match;
}

