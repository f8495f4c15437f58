/* template.c — reply templates: a scripted string "$match:REGEX" (or
 * "$last:REGEX") in a tool call's input, or as the whole reply text, is
 * replaced per request by what REGEX finds in the raw request body. Loom
 * invents ids at run time (event ids, tool-use ids), and a scripted model
 * must be able to echo one back. The regexes are compiled once at load, so a
 * bad one fails at start-up; a regex that finds nothing leaves the literal
 * template in the reply, where a test sees it, and is reported in the log. */
#include "mockllm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char MATCH_PREFIX[] = "$match:";
static const char LAST_PREFIX[] = "$last:";

bool template_is(const char *s)
{
    return s && (!strncmp(s, MATCH_PREFIX, sizeof MATCH_PREFIX - 1) ||
                 !strncmp(s, LAST_PREFIX, sizeof LAST_PREFIX - 1));
}

static const mock_template *find(const mock_reply *r, const char *s, size_t *idx)
{
    for (size_t i = 0; i < r->n_tpls; i++)
        if (!strcmp(r->tpls[i].value, s)) {
            if (idx)
                *idx = i;
            return &r->tpls[i];
        }
    return NULL;
}

int template_add(mock_reply *r, const char *s, char *err, size_t errlen)
{
    if (find(r, s, NULL))
        return 0;
    bool last = !strncmp(s, LAST_PREFIX, sizeof LAST_PREFIX - 1);
    const char *regex = s + (last ? sizeof LAST_PREFIX : sizeof MATCH_PREFIX) - 1;
    if (!*regex) {
        snprintf(err, errlen, "bad regex \"\": empty (write %sREGEX)",
                 last ? LAST_PREFIX : MATCH_PREFIX);
        return -1;
    }
    regex_t re;
    int rc = regcomp(&re, regex, REG_EXTENDED);
    if (rc) {
        char why[256];
        regerror(rc, &re, why, sizeof why);
        snprintf(err, errlen, "bad regex \"%s\": %s", regex, why);
        return -1;
    }
    r->tpls = xrealloc(r->tpls, (r->n_tpls + 1) * sizeof *r->tpls);
    r->tpls[r->n_tpls++] = (mock_template){.value = s, .regex = regex, .last = last,
                                           .re = re};
    return 0;
}

void template_free(mock_reply *r)
{
    for (size_t i = 0; i < r->n_tpls; i++)
        regfree(&r->tpls[i].re);
    free(r->tpls);
    r->tpls = NULL;
    r->n_tpls = 0;
}

/* The first (or, for "$last:", the last) match of t in body: the whole match,
 * or its first capture group when the regex has one (empty when that group
 * took no part in the match). Owned, valid UTF-8; NULL when nothing matches.
 * Successive matches do not overlap; an empty match moves on by one byte. */
static char *search(const mock_template *t, const char *body, size_t len)
{
    regmatch_t pm[2];
    size_t ng = t->re.re_nsub ? 2 : 1;
    size_t off = 0, so = 0, eo = 0;
    bool found = false;
    while (off <= len) {
        int flags = off ? REG_NOTBOL : 0;
        const char *base = body;
#ifdef REG_STARTEND
        /* Offsets stay absolute and each step does not rescan the tail. */
        pm[0].rm_so = (regoff_t)off;
        pm[0].rm_eo = (regoff_t)len;
        flags |= REG_STARTEND;
#else
        base = body + off;
#endif
        if (regexec(&t->re, base, ng, pm, flags))
            break;
        size_t shift = (size_t)(base - body);
        size_t m_so = shift + (size_t)pm[0].rm_so, m_eo = shift + (size_t)pm[0].rm_eo;
        const regmatch_t *g = &pm[ng - 1];
        if (g->rm_so < 0) {
            so = eo = 0;
        } else {
            so = shift + (size_t)g->rm_so;
            eo = shift + (size_t)g->rm_eo;
        }
        found = true;
        if (!t->last)
            break;
        off = m_eo > m_so ? m_eo : m_eo + 1;
    }
    if (!found)
        return NULL;
    size_t n;
    /* In the C locale "." matches a single byte, which may split a UTF-8
     * character; a JSON string cannot hold the half. */
    return utf8_sanitize(body + so, eo - so, &n);
}

/* Per request: each distinct template is searched at most once. */
typedef struct {
    const mock_reply *r;
    const char *body;
    size_t len;
    char **found;   /* per template: result, or NULL */
    bool *done;
    json_t *misses;
} resolver;

static const char *resolve(resolver *z, const char *s)
{
    size_t i;
    const mock_template *t = find(z->r, s, &i);
    if (!t)
        return NULL; /* not a compiled template: cannot happen after load */
    if (!z->done[i]) {
        z->done[i] = true;
        z->found[i] = search(t, z->body, z->len);
        if (!z->found[i]) {
            bool listed = false;
            size_t k;
            json_t *m;
            json_array_foreach(z->misses, k, m)
                if (!strcmp(json_string_value(m), t->regex))
                    listed = true;
            if (!listed)
                json_array_append_new(z->misses, json_string(t->regex));
        }
    }
    return z->found[i];
}

static void substitute(resolver *z, json_t *j)
{
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        if (template_is(s)) {
            const char *v = resolve(z, s);
            if (v)
                json_string_set(j, v);
        }
    } else if (json_is_object(j)) {
        const char *key;
        json_t *val;
        json_object_foreach(j, key, val)
            substitute(z, val);
    } else if (json_is_array(j)) {
        size_t i;
        json_t *val;
        json_array_foreach(j, i, val)
            substitute(z, val);
    }
}

const mock_reply *template_render(const mock_reply *r, const char *body, size_t len,
                                  mock_reply_inst *inst, json_t *misses)
{
    memset(inst, 0, sizeof *inst);
    inst->reply = *r;
    if (!r->n_tpls)
        return &inst->reply;
    resolver z = {
        .r = r,
        .body = body ? body : "",
        .len = body ? len : 0,
        .found = xcalloc(r->n_tpls, sizeof *z.found),
        .done = xcalloc(r->n_tpls, sizeof *z.done),
        .misses = misses,
    };
    if (r->text_templated) {
        const char *v = resolve(&z, r->text);
        if (v) {
            inst->text = xstrdup(v);
            inst->reply.text = inst->text;
        }
    }
    if (r->n_calls) {
        inst->calls = xcalloc(r->n_calls, sizeof *inst->calls);
        inst->inputs = json_array();
        for (size_t i = 0; i < r->n_calls; i++) {
            mock_tool_call *c = &inst->calls[i];
            *c = r->calls[i];
            if (c->templated) {
                json_t *in = json_deep_copy(r->calls[i].input);
                substitute(&z, in);
                json_array_append_new(inst->inputs, in);
                c->input = in;
                c->arguments = json_dumps(in, JSON_COMPACT);
                if (!c->arguments) /* only when out of memory */
                    c->arguments = xstrdup(r->calls[i].arguments);
            } else {
                c->arguments = xstrdup(r->calls[i].arguments);
            }
        }
        inst->reply.calls = inst->calls;
    }
    for (size_t i = 0; i < r->n_tpls; i++)
        free(z.found[i]);
    free(z.found);
    free(z.done);
    return &inst->reply;
}

void template_release(mock_reply_inst *inst)
{
    for (size_t i = 0; inst->calls && i < inst->reply.n_calls; i++)
        free(inst->calls[i].arguments);
    free(inst->calls);
    free(inst->text);
    json_decref(inst->inputs);
    memset(inst, 0, sizeof *inst);
}
