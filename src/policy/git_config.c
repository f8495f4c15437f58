/* git_config.c — a repository's git configuration that runs programs
 * (git_config.h). The file format is git's: "[section]" or
 * [section "subsection"] headers, then "key = value" lines; names are
 * case-insensitive. Only the names matter here, and whether a value turns
 * the feature off. No state; thread-safe. */
#include "policy/git_config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fileio.h"
#include "base/path.h"
#include "base/str.h"
#include "shell/bash_parse.h"

#define GIT_CONFIG_READ_CAP (1024 * 1024)

/* Keys that name a program, as section, subsection (NULL: none, "*": any)
 * and key. */
static const struct {
    const char *section, *sub, *key;
} code_keys[] = {
    {"core", NULL, "fsmonitor"},     {"core", NULL, "hookspath"},
    {"core", NULL, "sshcommand"},    {"core", NULL, "pager"},
    {"core", NULL, "editor"},        {"core", NULL, "askpass"},
    {"core", NULL, "gitproxy"},      {"core", NULL, "alternaterefscommand"},
    {"sequence", NULL, "editor"},    {"diff", NULL, "external"},
    {"diff", "*", "textconv"},       {"diff", "*", "command"},
    {"merge", "*", "driver"},        {"filter", "*", "clean"},
    {"filter", "*", "smudge"},       {"filter", "*", "process"},
    {"credential", NULL, "helper"},  {"credential", "*", "helper"},
    {"gpg", NULL, "program"},        {"gpg", "*", "program"},
    {"pager", "*", NULL},            {"uploadpack", NULL, "packobjectshook"},
    {"include", NULL, "path"},       {"includeif", "*", "path"},
    {"alias", NULL, NULL},
};

/* core.fsmonitor = true or false selects git's own daemon or nothing. */
static bool value_is_plain_bool(const char *v)
{
    return !strcasecmp(v, "false") || !strcasecmp(v, "true") || !strcmp(v, "0") ||
           !strcmp(v, "1") || !strcasecmp(v, "no") || !strcasecmp(v, "off");
}

static bool key_runs_code(const char *section, const char *sub, const char *key,
                          const char *value)
{
    for (size_t i = 0; i < sizeof code_keys / sizeof code_keys[0]; i++) {
        if (strcasecmp(code_keys[i].section, section) != 0)
            continue;
        if (code_keys[i].sub == NULL ? sub != NULL : sub == NULL)
            continue;
        if (code_keys[i].key && strcasecmp(code_keys[i].key, key) != 0)
            continue;
        if (!strcasecmp(section, "core") && !strcasecmp(key, "fsmonitor") &&
            value_is_plain_bool(value))
            return false;
        if (!strcasecmp(section, "alias") && value[0] != '!')
            return false; /* an alias of git's own subcommands */
        return true;
    }
    return false;
}

static void trim(char **s, char **e)
{
    while (*s < *e && isspace((unsigned char)**s))
        (*s)++;
    while (*e > *s && isspace((unsigned char)(*e)[-1]))
        (*e)--;
}

bool git_config_text_runs_code(const char *text, char *why, size_t cap)
{
    char section[128] = "", sub[256] = "";
    bool has_sub = false;
    for (const char *line = text; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *buf = xstrndup(line, len);
        char *s = buf, *e = buf + len;
        trim(&s, &e);
        *e = '\0';
        if (*s == '[') {
            char *close = strchr(s, ']');
            if (close) {
                *close = '\0';
                char *q = strchr(s + 1, '"');
                has_sub = q != NULL;
                char *name_end = q ? q : close;
                char *n0 = s + 1, *n1 = name_end;
                trim(&n0, &n1);
                snprintf(section, sizeof section, "%.*s", (int)(n1 - n0), n0);
                char *dot = strchr(section, '.'); /* [diff.x] old form */
                if (dot && !q) {
                    *dot = '\0';
                    has_sub = true;
                    snprintf(sub, sizeof sub, "%s", dot + 1);
                } else if (q) {
                    char *q2 = strrchr(q + 1, '"');
                    snprintf(sub, sizeof sub, "%.*s", (int)(q2 ? q2 - q - 1 : 0), q + 1);
                }
                /* "[section] key = v" on one line: the rest is a key. */
                s = close + 1;
                while (*s && isspace((unsigned char)*s))
                    s++;
            } else {
                s += strlen(s);
            }
        }
        if (*s && *s != '#' && *s != ';' && section[0]) {
            char *eq = strchr(s, '=');
            char *k0 = s, *k1 = eq ? eq : s + strlen(s);
            trim(&k0, &k1);
            char key[128];
            snprintf(key, sizeof key, "%.*s", (int)(k1 - k0), k0);
            char *v0 = eq ? eq + 1 : (char *)"true", *v1 = v0 + strlen(v0);
            trim(&v0, &v1);
            char value[64];
            snprintf(value, sizeof value, "%.*s", (int)(v1 - v0), v0);
            if (value[0] == '"')
                memmove(value, value + 1, strlen(value));
            if (key_runs_code(section, has_sub ? sub : NULL, key, value)) {
                if (has_sub)
                    snprintf(why, cap, "%s.%s.%s", section, sub, key);
                else
                    snprintf(why, cap, "%s.%s", section, key);
                free(buf);
                return true;
            }
        }
        free(buf);
        line = nl ? nl + 1 : NULL;
    }
    return false;
}

/* The repository's git directory: <root>/.git, or where a .git file's
 * "gitdir:" line points (worktrees, submodules). Caller frees. */
static char *git_dir(const char *root)
{
    char *dotgit = path_join(root, ".git");
    char *text = file_read_text(dotgit, GIT_CONFIG_READ_CAP, 0, NULL);
    if (text && !strncmp(text, "gitdir:", 7)) {
        char *s = text + 7, *e = text + strlen(text);
        trim(&s, &e);
        *e = '\0';
        char *dir = path_make_absolute(s, root);
        free(text);
        free(dotgit);
        return dir;
    }
    free(text);
    return dotgit;
}

bool git_config_runs_code(const char *cwd, char *why, size_t cap)
{
    if (why && cap)
        why[0] = '\0';
    char *root = cwd ? path_repo_root(cwd) : NULL;
    if (!root)
        return false;
    char *dir = git_dir(root);
    free(root);
    static const char *const files[] = {"config", "config.worktree"};
    bool found = false;
    char buf[256] = "";
    for (size_t i = 0; i < 2 && !found; i++) {
        char *path = path_join(dir, files[i]);
        char *text = file_read_text(path, GIT_CONFIG_READ_CAP, 0, NULL);
        if (text)
            found = git_config_text_runs_code(text, buf, sizeof buf);
        free(text);
        free(path);
    }
    free(dir);
    if (found && why && cap)
        snprintf(why, cap, "%s", buf);
    return found;
}

bool git_command_runs_git(const char *command)
{
    bash_cmds *cmds = bash_parse(command);
    bool git = false;
    for (size_t i = 0; i < bash_cmds_count(cmds) && !git; i++) {
        const bash_cmd *c = bash_cmds_at(cmds, i);
        for (size_t k = 0; k < c->argc && !git; k++) {
            const char *w = c->argv[k];
            size_t n = strlen(w);
            git = !strcmp(w, "git") || (n > 4 && !strcmp(w + n - 4, "/git"));
        }
    }
    /* A line the parser is unsure of may hide git anywhere. */
    if (!git && bash_cmds_uncertain(cmds) && strstr(command, "git"))
        git = true;
    bash_cmds_free(cmds);
    return git;
}
