/* risk_args.c — reading a simple command's options the way GNU getopt
 * does, against a spec of which options take a value (risk_args.h). Used
 * by the write-target rules to find the files an option names.
 * Stateless and reentrant.
 */
#include "policy/risk_args.h"

#include <string.h>

/* Is the long option as written (name, len) a spelling of full? GNU
 * getopt takes any unambiguous prefix; a prefix of at least two letters
 * is counted, which can only find more, never fewer. */
bool risk_long_is(const char *name, size_t len, const char *full)
{
    size_t fl = strlen(full);
    if (len > fl || strncmp(name, full, len))
        return false;
    return len == fl || len >= 2;
}

bool risk_long_takes_value(const risk_argspec *sp, const char *name, size_t len)
{
    for (const char *const *l = sp->long_val; l && *l; l++)
        if (risk_long_is(name, len, *l))
            return true;
    return false;
}

void risk_scan_args(const bash_cmd *c, size_t from, const risk_argspec *sp, risk_args *a)
{
    a->nops = a->nopt = 0;
    bool ended = false;
    for (size_t i = from; i < c->argc; i++) {
        const char *w = c->argv[i];
        if (!ended && !strcmp(w, "--")) {
            ended = true;
            continue;
        }
        if (ended || w[0] != '-' || !w[1]) {
            if (a->nops < RISK_ARGS_MAX)
                a->ops[a->nops++] = w;
            continue;
        }
        if (w[1] == '-') {
            const char *name = w + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            const char *v = eq ? eq + 1 : NULL;
            if (!eq && risk_long_takes_value(sp, name, len) && i + 1 < c->argc)
                v = c->argv[++i];
            if (a->nopt < RISK_ARGS_MAX)
                a->opt[a->nopt++] = (risk_opt_seen){0, name, len, v};
            continue;
        }
        for (size_t k = 1; w[k]; k++) {
            char s = w[k];
            const char *v = NULL;
            bool stop = false;
            if (sp->short_tail && strchr(sp->short_tail, s)) {
                v = w[k + 1] ? w + k + 1 : NULL;
                stop = true;
            } else if (sp->short_val && strchr(sp->short_val, s)) {
                v = w[k + 1] ? w + k + 1 : (i + 1 < c->argc ? c->argv[++i] : NULL);
                stop = true;
            }
            if (a->nopt < RISK_ARGS_MAX)
                a->opt[a->nopt++] = (risk_opt_seen){s, NULL, 0, v};
            if (stop)
                break;
        }
    }
}

/* Does option (short s or long full) occur? */
bool risk_opt_has(const risk_args *a, char s, const char *full)
{
    for (size_t k = 0; k < a->nopt; k++)
        if ((s && a->opt[k].s == s) || (full && a->opt[k].l && risk_long_is(a->opt[k].l, a->opt[k].llen, full)))
            return true;
    return false;
}

/* Calls emit for the value of every occurrence of the option. */
void risk_opt_values(const risk_args *a, char s, const char *full, risk_emit_fn emit, void *ctx)
{
    for (size_t k = 0; k < a->nopt; k++)
        if (a->opt[k].v && ((s && a->opt[k].s == s) ||
                            (full && a->opt[k].l && risk_long_is(a->opt[k].l, a->opt[k].llen, full))))
            emit(ctx, a->opt[k].v);
}

const char *risk_opt_last(const risk_args *a, char s, const char *full)
{
    const char *v = NULL;
    for (size_t k = 0; k < a->nopt; k++)
        if (a->opt[k].v && ((s && a->opt[k].s == s) ||
                            (full && a->opt[k].l && risk_long_is(a->opt[k].l, a->opt[k].llen, full))))
            v = a->opt[k].v;
    return v;
}
