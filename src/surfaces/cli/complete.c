/* complete.c — Tab completion's candidates (complete.h). Reads only the
 * names it is given and the folder an "@" word points into. */
#include "surfaces/cli/complete.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/path.h"
#include "base/str.h"

static void add(complete_result *r, const char *s)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->cands[i], s))
            return;
    if (r->n == COMPLETE_MAX) {
        r->more = 1;
        return;
    }
    r->cands = xrealloc(r->cands, (r->n + 2) * sizeof *r->cands);
    r->cands[r->n++] = xstrdup(s);
    r->cands[r->n] = NULL;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Does the relative path have a component named .git? */
static bool into_git(const char *rel)
{
    for (const char *p = rel; (p = strstr(p, ".git")) != NULL; p += 4)
        if ((p == rel || p[-1] == '/') && (p[4] == '/' || p[4] == '\0'))
            return true;
    return false;
}

static void paths(complete_result *r, const char *word, const char *cwd)
{
    if (into_git(word) || !cwd)
        return;
    const char *slash = strrchr(word, '/');
    char *dirpart = slash ? xstrndup(word, (size_t)(slash - word + 1)) : xstrdup("");
    const char *base = slash ? slash + 1 : word;
    char *dir = word[0] == '/' ? xstrdup(*dirpart ? dirpart : "/") : path_join(cwd, dirpart);
    DIR *d = opendir(dir);
    if (d) {
        size_t bl = strlen(base);
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            const char *n = e->d_name;
            if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, ".git"))
                continue;
            if (n[0] == '.' && base[0] != '.')
                continue;
            if (strncmp(n, base, bl) != 0)
                continue;
            char *full = path_join(dir, n);
            struct stat st;
            bool is_dir = stat(full, &st) == 0 && S_ISDIR(st.st_mode);
            free(full);
            loom_str c = LOOM_STR_INIT;
            str_printf(&c, "%s%s%s", dirpart, n, is_dir ? "/" : "");
            add(r, str_cstr(&c));
            str_free(&c);
        }
        closedir(d);
    }
    free(dir);
    free(dirpart);
}

static const char *const modes[] = {"default", "acceptEdits", "plan", "auto", "dontAsk",
                                    "bypassPermissions", "fullAccess", "delegate", NULL};
static const char *const agents_subs[] = {"show", "stop", "merge", NULL};
static const char *const mcp_subs[] = {"reconnect", "approve", NULL};

/* The list the word after "/cmd [sub] " is completed from, or NULL. The
 * words before the cursor's are line[lead..start). */
static const char *const *arg_list(const char *line, size_t lead, size_t start,
                                   const complete_args *args)
{
    char *head = xstrndup(line + lead, start - lead);
    char *words[3] = {NULL, NULL, NULL};
    size_t nw = 0;
    for (char *save = NULL, *w = strtok_r(head, " \t", &save); w && nw < 3;
         w = strtok_r(NULL, " \t", &save))
        words[nw++] = w;
    const char *const *list = NULL;
    const char *cmd = nw ? words[0] : "";
    if (nw == 1 && !strcmp(cmd, "/permissions"))
        list = modes;
    else if (nw == 1 && !strcmp(cmd, "/model"))
        list = args ? args->models : NULL;
    else if (nw == 1 && !strcmp(cmd, "/output-style"))
        list = args ? args->styles : NULL;
    else if (nw == 1 && !strcmp(cmd, "/agents"))
        list = agents_subs;
    else if (nw == 2 && !strcmp(cmd, "/agents") && (!strcmp(words[1], "show") || !strcmp(words[1], "stop")))
        list = args ? args->agents : NULL;
    else if (nw == 1 && !strcmp(cmd, "/mcp"))
        list = mcp_subs;
    else if (nw == 2 && !strcmp(cmd, "/mcp") && (!strcmp(words[1], "reconnect") || !strcmp(words[1], "approve")))
        list = args ? args->servers : NULL;
    free(head);
    return list;
}

void complete_line(const char *line, size_t cursor, const char *const *names, const char *cwd,
                   complete_result *out)
{
    complete_line_args(line, cursor, names, NULL, cwd, out);
}

void complete_line_args(const char *line, size_t cursor, const char *const *names,
                        const complete_args *args, const char *cwd, complete_result *out)
{
    memset(out, 0, sizeof *out);
    out->cands = xcalloc(1, sizeof *out->cands);
    size_t len = strlen(line);
    if (cursor > len)
        cursor = len;
    size_t start = cursor;
    while (start > 0 && line[start - 1] != ' ' && line[start - 1] != '\t' && line[start - 1] != '\n')
        start--;
    char *word = xstrndup(line + start, cursor - start);
    size_t lead = strspn(line, " \t");
    size_t skip = 0; /* the word's marker, not part of a candidate */
    bool is_name = false;
    if (word[0] == '/' && start == lead && word[1] != '/') {
        for (const char *const *n = names; n && *n; n++)
            if (!strncmp(*n, word + 1, strlen(word + 1)))
                add(out, *n);
        skip = 1;
        is_name = true;
    } else if (word[0] == '@') {
        paths(out, word + 1, cwd);
        skip = 1;
    } else if (line[lead] == '/' && start > lead) {
        const char *const *list = arg_list(line, lead, start, args);
        for (const char *const *n = list; n && *n; n++)
            if (!strncmp(*n, word, strlen(word)))
                add(out, *n);
        is_name = true; /* a name: a space after it */
    }
    if (out->n)
        qsort(out->cands, out->n, sizeof *out->cands, cmp);
    /* What every candidate shares beyond the word. */
    size_t have = strlen(word) - skip, common = 0;
    if (out->n) {
        common = strlen(out->cands[0]);
        for (size_t i = 1; i < out->n; i++) {
            size_t k = 0;
            while (k < common && out->cands[i][k] == out->cands[0][k])
                k++;
            common = k;
        }
    }
    loom_str ins = LOOM_STR_INIT;
    if (common > have)
        str_append(&ins, out->cands[0] + have, common - have);
    if (out->n == 1 && !out->more) {
        const char *c = out->cands[0];
        bool folder = !is_name && c[0] && c[strlen(c) - 1] == '/';
        if (!folder && (cursor == len || (line[cursor] != ' ' && line[cursor] != '\t')))
            str_putc(&ins, ' ');
    }
    out->insert = str_steal(&ins);
    if (!out->insert)
        out->insert = xstrdup("");
    free(word);
}

void complete_result_free(complete_result *r)
{
    free(r->insert);
    for (size_t i = 0; r->cands && i < r->n; i++)
        free(r->cands[i]);
    free(r->cands);
    memset(r, 0, sizeof *r);
}
