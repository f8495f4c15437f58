/* fuzz_bash_parse.c — libFuzzer target for the shell-command splitter and
 * the three consumers of its output (permission rules, risk classifier,
 * tamper guard): nothing may crash, leak, hang or recurse without bound,
 * and the parse must keep the invariants bash_parse.h promises.
 *
 * The input is the command text, NUL bytes included (bash_parse_n must
 * stop at the first one and say uncertain). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "shell/bash_parse.h"
#include "policy/risk.h"
#include "policy/rules.h"
#include "policy/tamper.h"

static perm_rules *g_rules;

static void check_invariants(const bash_cmds *c, size_t len, bool had_nul)
{
    size_t n = bash_cmds_count(c);
    if (n > BASH_PARSE_MAX_CMDS)
        abort();
    if (had_nul && !bash_cmds_uncertain(c))
        abort();
    if (bash_cmds_uncertain(c) != (bash_cmds_why(c) != NULL))
        abort();
    for (size_t i = 0; i < n; i++) {
        const bash_cmd *m = bash_cmds_at(c, i);
        if (!m || m->argv[m->argc] != NULL || (m->parent >= (long)i) || m->parent < -1)
            abort();
        if ((m->parent >= 0) != ((m->flags & BASH_CMD_DERIVED) != 0))
            abort();
        if ((m->flags & BASH_CMD_TRANSPARENT) && !(m->flags & BASH_CMD_DERIVED))
            abort();
        for (size_t k = 0; k < m->argc; k++)
            if (!m->argv[k])
                abort();
        for (size_t k = 0; k < m->nassign; k++)
            if (!m->assign[k] || !strchr(m->assign[k], '='))
                abort();
        for (size_t k = 0; k < m->nredir; k++)
            if (!m->redir[k].target || m->redir[k].kind > BASH_REDIR_HERESTRING)
                abort();
        /* Words come out of the input: none can be longer than it, except
         * the escapes of $'…' that grow (\u → 4 bytes from 6). */
        for (size_t k = 0; k < m->argc; k++)
            if (strlen(m->argv[k]) > len)
                abort();
        char *t = bash_cmd_text(m);
        free(t);
        (void)bash_cmd_name(m);
    }
    if (bash_cmds_at(c, n) != NULL)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_rules) {
        g_rules = perm_rules_new();
        static const char *const allow[] = {"Bash(git status:*)", "Bash(ls:*)", "Bash(echo:*)",
                                            "Bash(make:*)", NULL};
        static const char *const deny[] = {"Bash(rm:*)", "Edit(/etc/**)", "Read(./secrets/**)",
                                           "Bash(git push * main)", NULL};
        for (size_t k = 0; allow[k]; k++)
            perm_rules_add(g_rules, PERM_ALLOW, allow[k], RULE_SRC_USER, NULL);
        for (size_t k = 0; deny[k]; k++)
            perm_rules_add(g_rules, PERM_DENY, deny[k], RULE_SRC_PROJECT, NULL);
    }
    const char *in = (const char *)data;
    bool had_nul = memchr(in, '\0', size) != NULL;

    bash_cmds *c = bash_parse_n(in, size);
    check_invariants(c, size * 2 + 16, had_nul);
    bash_cmds_free(c);

    /* The consumers take C strings: the text up to the first NUL. */
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    risk_verdict v = risk_classify_bash(s);
    if (v.level > RISK_FORBIDDEN)
        abort();
    json_t *input = json_object();
    json_object_set_new(input, "command", json_string(s)); /* NULL for invalid UTF-8 */
    if (json_object_get(input, "command")) {
        perm_check_detail d;
        perm_rules_check_detail(g_rules, "Bash", input, "/nonexistent/loom-fuzz", &d);
        if (d.match.verdict > PERM_DENY)
            abort();
        char why[256];
        tamper_check_call("Bash", input, why, sizeof why);
    }
    json_decref(input);
    free(s);
    return 0;
}
