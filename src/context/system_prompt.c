/* system_prompt.c — Loom's system prompt: a static, cacheable part with the
 * working rules of seed 000 §6 and a replaceable style section (how Loom
 * talks to the person), and a dynamic part: the environment, then the
 * instructions and memory that memory.c renders. No state; any thread. */
#include "context/system_prompt.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>

#include "base/fileio.h"
#include "base/str.h"
#include "context/memory.h"

/* The static part is built from pieces so an output style can replace the
 * way Loom talks while the rest stays put (docs/output-styles.md). The
 * default is the pieces joined as they always were: its bytes, and so the
 * providers' cached prefix, do not change. */
#define IDENTITY                                                                                \
    "You are Loom, an agent that works in the user's project from the terminal. You use "     \
    "the tools you are given to read, change and run things until the task is done"
/* The default style section: how Loom talks, in the identity's last words. */
#define DEFAULT_STYLE ", then you answer briefly"
/* The rules any style keeps: they are about honesty and the user's data,
 * not about code or brevity. */
#define RULE_HONEST                                                                             \
    "- Report honestly: say what you did, what you verified and what you did not. Never "     \
    "claim a test passed unless you ran it.\n"
#define RULE_SAFE                                                                               \
    "- Keep the user's data safe: no destructive command (deleting, force-pushing, "          \
    "overwriting) without a clear need.\n"
/* The coding rules, which a style without keep-coding-instructions drops. */
#define RULES_CODING_HEAD                                                                       \
    "- Read a file before you edit it; edit with the smallest change that does the job.\n"   \
    "- When something fails, find out why before trying again; do not repeat a failing "     \
    "action unchanged.\n"
#define RULE_SCOPE "- Do what was asked and nothing more: no unrequested features, files or refactors.\n"
#define TOOLS_PART                                                                              \
    "# Tools\n"                                                                                \
    "- Read, Glob and Grep to find and read code; Edit for changes to existing files, "       \
    "Write for new files.\n"                                                                   \
    "- Bash runs shell commands in the working directory; use run_in_background for long "    \
    "servers and read them with TaskOutput.\n"                                                 \
    "- TodoWrite keeps a plan for multi-step work; keep exactly one item in progress.\n"      \
    "- Independent read-only calls can be made together in one turn; they run in parallel.\n" \
    "- A tool error is information: read it and adapt.\n"

static const char STATIC_PART[] = IDENTITY DEFAULT_STYLE ".\n"
                                  "\n"
                                  "# Working rules\n" RULES_CODING_HEAD RULE_HONEST RULE_SCOPE
                                      RULE_SAFE "\n" TOOLS_PART;

const char *system_prompt_static(void)
{
    return STATIC_PART;
}

char *system_prompt_static_styled(const char *style_body, bool keep_coding)
{
    if (!style_body)
        return xstrdup(STATIC_PART);
    /* Every style other than the default drops the brevity of the default
     * section; the coding rules go too unless the style keeps them (Claude
     * Code's rule: code.claude.com/docs/en/output-styles, "How output
     * styles work"). The style's own text comes last. */
    loom_str s = LOOM_STR_INIT;
    str_puts(&s, IDENTITY ".\n\n# Working rules\n");
    if (keep_coding)
        str_puts(&s, RULES_CODING_HEAD RULE_HONEST RULE_SCOPE RULE_SAFE);
    else
        str_puts(&s, RULE_HONEST RULE_SAFE);
    str_puts(&s, "\n" TOOLS_PART "\n" SYSTEM_PROMPT_STYLE_HEADING "\n");
    str_puts(&s, style_body);
    if (!*style_body || style_body[strlen(style_body) - 1] != '\n')
        str_putc(&s, '\n');
    return str_steal(&s);
}

/* The git summary comes from the repository's files, not from running git:
 * `git status` costs ~9 ms of every start (measured), more than the rest of
 * Loom's start together, and the model can run it when it matters. */
static char *find_git_dir(const char *cwd)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", cwd);
    for (;;) {
        char candidate[4200];
        snprintf(candidate, sizeof candidate, "%s/.git", path);
        struct stat st;
        if (stat(candidate, &st) == 0) {
            if (S_ISDIR(st.st_mode))
                return xstrdup(candidate);
            /* A worktree or submodule: ".git" is a file naming the real dir. */
            char *text = NULL;
            if (file_read_all(candidate, &text, NULL, NULL) != 0)
                return NULL;
            char *dir = NULL;
            if (strncmp(text, "gitdir: ", 8) == 0) {
                char *end = strpbrk(text + 8, "\r\n");
                if (end)
                    *end = '\0';
                if (text[8] == '/')
                    dir = xstrdup(text + 8);
                else {
                    loom_str d = LOOM_STR_INIT;
                    str_printf(&d, "%s/%s", path, text + 8);
                    dir = str_steal(&d);
                }
            }
            free(text);
            return dir;
        }
        char *slash = strrchr(path, '/');
        if (!slash || slash == path)
            return NULL;
        *slash = '\0';
    }
}

static void append_git(loom_str *s, const char *cwd)
{
    char *git = find_git_dir(cwd);
    if (!git)
        return;
    char head_path[4200];
    snprintf(head_path, sizeof head_path, "%s/HEAD", git);
    char *head = NULL;
    if (file_read_all(head_path, &head, NULL, NULL) == 0) {
        char *end = strpbrk(head, "\r\n");
        if (end)
            *end = '\0';
        if (strncmp(head, "ref: refs/heads/", 16) == 0)
            str_printf(s, "- Git branch: %s\n", head + 16);
        else if (*head)
            str_printf(s, "- Git: detached HEAD at %.12s\n", head);
        str_puts(s, "- Run `git status` / `git log` for the working tree and history.\n");
    }
    free(head);
    free(git);
}

char *system_prompt_dynamic_report(const char *cwd, bool trusted, bool claude,
                                   const secrets_deny *deny, memory_report *rep)
{
    loom_str s = LOOM_STR_INIT;
    struct utsname u;
    bool have_uname = uname(&u) == 0;
    char date[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    strftime(date, sizeof date, "%Y-%m-%d", gmtime_r(&now, &tm));
    const char *shell = getenv("SHELL");
    str_printf(&s, "# Environment\n- Working directory: %s\n- OS: %s %s\n- Shell: %s\n- Date: %s\n",
               cwd, have_uname ? u.sysname : "unknown", have_uname ? u.release : "",
               shell ? shell : "/bin/sh", date);
    append_git(&s, cwd);
    char *memory = memory_render(cwd, trusted, claude, deny, rep);
    str_puts(&s, memory);
    free(memory);
    return str_steal(&s);
}

char *system_prompt_dynamic(const char *cwd, bool trusted, bool claude, const secrets_deny *deny)
{
    return system_prompt_dynamic_report(cwd, trusted, claude, deny, NULL);
}
