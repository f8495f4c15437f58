/* steps.c — a run's session records as normalized steps: what E1 compares
 * across runs. A step is a tool name and its key input, normalized so
 * that the same action in another run has the same key:
 *   Bash     the first command's program and subcommand, "Bash(git push)"
 *            (env assignments and a leading `cd …&&` skipped; the
 *            subcommand only when it is a plain word, not a flag or path)
 *   Read, Edit, Write, NotebookEdit   the file's basename pattern, "Edit(*.c)"
 *            (its extension; the basename itself when it has none)
 *   Skill    the skill's name, "Skill(deploy-check)"
 *   others   the tool's name alone
 * A failed step carries its error class; a call refused by permissions is
 * marked denied (governance did its work: not a root cause). The failure
 * that "ended the run unresolved" is the last failed step whose key never
 * succeeded later in the run. Pure functions; any thread. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"
#include "ext/evolve/evolve_internal.h"

#define INPUT_CUT 200
#define OUTPUT_CUT 160

static bool plain_word(const char *w, size_t n)
{
    if (!n || !isalpha((unsigned char)w[0]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)w[i]) && w[i] != '-' && w[i] != '_' && w[i] != ':')
            return false;
    return true;
}

/* The next blank-separated word of *p (quotes not interpreted: the key is
 * a summary, not a parse). */
static const char *next_word(const char **p, size_t *n)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    const char *e = s;
    while (*e && *e != ' ' && *e != '\t' && *e != '\n' && *e != ';' && *e != '&' && *e != '|')
        e++;
    *n = (size_t)(e - s);
    *p = e;
    return s;
}

static bool assignment(const char *w, size_t n)
{
    const char *eq = memchr(w, '=', n);
    return eq && eq > w && plain_word(w, (size_t)(eq - w));
}

static char *bash_key(const char *cmd)
{
    const char *p = cmd;
    for (;;) {
        size_t n;
        const char *w = next_word(&p, &n);
        if (!n)
            return xstrdup("Bash");
        if (assignment(w, n))
            continue;
        if (n == 2 && memcmp(w, "cd", 2) == 0) {
            /* `cd dir && make`: the work is the command after it. */
            next_word(&p, &n);
            while (*p == ' ' || *p == '&' || *p == ';' || *p == '|')
                p++;
            continue;
        }
        if (n == 4 && memcmp(w, "sudo", 4) == 0)
            continue;
        loom_str s = {0};
        str_puts(&s, "Bash(");
        str_append(&s, w, n > 80 ? 80 : n);
        size_t m;
        const char *sub = next_word(&p, &m);
        if (plain_word(sub, m)) {
            str_putc(&s, ' ');
            str_append(&s, sub, m > 40 ? 40 : m);
        }
        str_putc(&s, ')');
        return str_steal(&s);
    }
}

static char *file_key(const char *tool, const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    char pat[96];
    if (dot && dot != base && strlen(dot) < 20)
        snprintf(pat, sizeof pat, "*%s", dot);
    else
        snprintf(pat, sizeof pat, "%.80s", *base ? base : "*");
    for (char *c = pat; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == '(' || *c == ')')
            *c = '_';
    loom_str s = {0};
    str_printf(&s, "%s(%s)", tool, pat);
    return str_steal(&s);
}

char *evolve_step_key(const char *tool, const json_t *input)
{
    if (!tool || !*tool)
        return xstrdup("?");
    if (!strcmp(tool, "Bash")) {
        const char *cmd = json_get_str(input, "command", NULL);
        return cmd ? bash_key(cmd) : xstrdup("Bash");
    }
    if (!strcmp(tool, "Read") || !strcmp(tool, "Edit") || !strcmp(tool, "Write") ||
        !strcmp(tool, "MultiEdit") || !strcmp(tool, "NotebookEdit")) {
        const char *path = json_get_str(input, "file_path", json_get_str(input, "notebook_path", NULL));
        return path ? file_key(tool, path) : xstrdup(tool);
    }
    if (!strcmp(tool, "Skill")) {
        const char *name = json_get_str(input, "name", json_get_str(input, "skill", NULL));
        if (name && plain_word(name, strlen(name)) && strlen(name) <= 64) {
            loom_str s = {0};
            str_printf(&s, "Skill(%s)", name);
            return str_steal(&s);
        }
    }
    return xstrndup(tool, 80);
}

void evolve_error_class(const char *output, char *buf, size_t cap)
{
    const char *o = output ? output : "";
    int code;
    if (sscanf(o, "Exit code %d", &code) == 1)
        snprintf(buf, cap, "exit %d", code);
    else if (strstr(o, "command not found"))
        snprintf(buf, cap, "not-found");
    else if (strstr(o, "No such file") || strstr(o, "does not exist"))
        snprintf(buf, cap, "no-such-file");
    else if (strstr(o, "timed out") || strstr(o, "Timed out"))
        snprintf(buf, cap, "timeout");
    else if (strstr(o, "Permission denied") || strstr(o, "EACCES"))
        snprintf(buf, cap, "permission");
    else
        snprintf(buf, cap, "error");
}

static bool refused(const char *out)
{
    return out && (strncmp(out, "Permission to use ", 18) == 0 || strstr(out, "denied by settings rule ") ||
                   strstr(out, ") requires approval for this call"));
}

static char *first_line(const char *text, size_t skip_lines, size_t cut)
{
    const char *p = text ? text : "";
    for (size_t i = 0; i < skip_lines; i++) {
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    size_t n = strcspn(p, "\n");
    return xstrndup(p, n > cut ? cut : n);
}

void evolve_trace_build(const json_t *records, evolve_trace *t)
{
    memset(t, 0, sizeof *t);
    t->unresolved = -1;
    json_t *by_call = json_object(); /* callId → step index */
    loom_str text = {0};
    const char *last_req = NULL;
    int turn = 0;
    size_t i;
    const json_t *r;
    json_array_foreach(records, i, r) {
        const char *type = json_get_str(r, "type", "");
        const char *req = json_get_str(json_get_obj(r, "providerData"), "conversationRequestId", NULL);
        if ((!strcmp(type, "function_call") || (!strcmp(type, "message") &&
                                                 !strcmp(json_get_str(r, "role", ""), "assistant"))) &&
            (!last_req || !req || strcmp(req, last_req) != 0)) {
            turn++;
            last_req = req;
        }
        if (!strcmp(type, "message") && !strcmp(json_get_str(r, "role", ""), "assistant")) {
            size_t k;
            const json_t *c;
            json_array_foreach(json_get_arr(r, "content"), k, c) {
                const char *s = json_get_str(c, "text", NULL);
                if (s && text.len < 64 * 1024) {
                    str_puts(&text, s);
                    str_putc(&text, '\n');
                }
            }
        } else if (!strcmp(type, "function_call")) {
            const char *name = json_get_str(r, "name", "");
            const char *args = json_get_str(r, "arguments", "");
            json_t *input = json_loads(args, 0, NULL);
            t->steps = xrealloc(t->steps, (t->n + 1) * sizeof *t->steps);
            evolve_step *s = &t->steps[t->n];
            memset(s, 0, sizeof *s);
            s->tool = xstrndup(name, 80);
            s->key = evolve_step_key(name, input);
            s->input = xstrndup(args, INPUT_CUT);
            s->turn = turn;
            json_decref(input);
            const char *cid = json_get_str(r, "callId", NULL);
            if (cid)
                json_object_set_new(by_call, cid, json_integer((json_int_t)t->n));
            t->n++;
        } else if (!strcmp(type, "function_call_result")) {
            const char *cid = json_get_str(r, "callId", NULL);
            json_t *at = cid ? json_object_get(by_call, cid) : NULL;
            if (!at)
                continue;
            evolve_step *s = &t->steps[json_integer_value(at)];
            const char *out = json_get_str(r, "output", "");
            bool err = json_get_bool(r, "isError", false) ||
                       !strcmp(json_get_str(r, "status", ""), "error");
            if (!err)
                continue;
            if (refused(out)) {
                s->denied = true;
                /* Long enough to hold the rule the denial names (constraints.c). */
                s->output = first_line(out, 0, 4 * OUTPUT_CUT);
                continue;
            }
            char cls[32];
            evolve_error_class(out, cls, sizeof cls);
            s->error_class = xstrdup(cls);
            /* "Exit code N" is the class; the line after it says why. */
            s->output = first_line(out, strncmp(out, "Exit code ", 10) == 0 ? 1 : 0, OUTPUT_CUT);
        }
    }
    json_decref(by_call);
    t->text = str_steal(&text);
    for (size_t k = t->n; k-- > 0;) {
        if (!t->steps[k].error_class)
            continue;
        bool redone = false;
        for (size_t j = k + 1; j < t->n && !redone; j++)
            redone = !t->steps[j].error_class && !t->steps[j].denied &&
                     !strcmp(t->steps[j].key, t->steps[k].key);
        if (!redone) {
            t->unresolved = (int)k;
            break;
        }
    }
}

void evolve_trace_free(evolve_trace *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->steps[i].key);
        free(t->steps[i].tool);
        free(t->steps[i].input);
        free(t->steps[i].error_class);
        free(t->steps[i].output);
    }
    free(t->steps);
    free(t->text);
    memset(t, 0, sizeof *t);
}

char *evolve_trace_signature(const evolve_trace *t)
{
    loom_str s = {0};
    const char *prev = NULL;
    for (size_t i = 0; i < t->n; i++) {
        const evolve_step *st = &t->steps[i];
        if (st->denied || st->error_class || (prev && !strcmp(prev, st->key)))
            continue;
        if (s.len)
            str_puts(&s, " > ");
        str_puts(&s, st->key);
        prev = st->key;
    }
    return s.len ? str_steal(&s) : xstrdup("");
}
