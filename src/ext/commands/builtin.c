/* builtin.c — the commands Loom ships: /init (write an AGENTS.md from the
 * repository) and /review (review the working tree's diff). Each is the
 * text of a command file, parsed like any other (command_def_parse) and
 * added to every catalog before the folders are read, so a user's or
 * project's command of the same name replaces it. /review's !`git ...`
 * lines run through the governed pipeline like any command's; its
 * allowed-tools grant only those two git commands, /init's only writing
 * ./AGENTS.md. Both are the user's to type, not the model's to call
 * (disable-model-invocation, as Claude Code's built-ins): the Skill tool
 * does not offer them. Constant data; the catalog owns the parsed defs. */
#include "ext/commands/commands_internal.h"

#include <stddef.h>

/* Written for Loom; the shape follows what Claude Code's /init and /review
 * do (explore, then write AGENTS.md; review the diff, do not edit). */
static const char init_text[] =
    "---\n"
    "description: write an AGENTS.md for this repository (build and test commands, layout, "
    "conventions)\n"
    "argument-hint: \"[focus]\"\n"
    "allowed-tools: Edit(./AGENTS.md)\n"
    "disable-model-invocation: true\n"
    "---\n"
    "Write a file named AGENTS.md at the root of this repository: the instructions a coding "
    "agent reads before it works here.\n"
    "\n"
    "Explore first: the README, the build files (Makefile, CMakeLists.txt, package.json, "
    "pyproject.toml, Cargo.toml, go.mod, ...), the CI configuration, and a few source and test "
    "files. Then write AGENTS.md with:\n"
    "\n"
    "1. How to build, lint and test: the exact commands, and how to run one test.\n"
    "2. The layout: the main folders, what each holds, where the entry points are.\n"
    "3. The conventions the code follows that a newcomer would miss: style, naming, error "
    "handling, how tests are written, and what existing instruction files (CLAUDE.md, "
    ".cursorrules, .github/copilot-instructions.md) say.\n"
    "\n"
    "Keep it short and specific to this repository: no generic advice, nothing a reader finds "
    "by listing the files. If AGENTS.md exists, improve it and keep what is still true.\n"
    "$ARGUMENTS\n";

static const char review_text[] =
    "---\n"
    "description: review the working tree's changes (git status and git diff against HEAD)\n"
    "argument-hint: \"[focus]\"\n"
    "allowed-tools: Bash(git status:*), Bash(git diff:*)\n"
    "disable-model-invocation: true\n"
    "---\n"
    "Review the uncommitted changes in this working tree as a careful reviewer would before "
    "they are committed.\n"
    "\n"
    "git status:\n"
    "!`git status --short`\n"
    "\n"
    "The diff, staged and unstaged, against HEAD:\n"
    "!`git diff HEAD`\n"
    "\n"
    "Look for bugs and wrong logic, unhandled errors and edge cases, security problems, missing "
    "or weak tests, and code that breaks the surrounding conventions; read the files around a "
    "change when the diff alone does not say enough. List the findings by severity, each with "
    "its file and line and a concrete fix, and say plainly when the change looks right. Do not "
    "edit files.\n"
    "$ARGUMENTS\n";

static const struct {
    const char *name, *path, *text;
} builtins[] = {
    {"init", "(built-in /init)", init_text},
    {"review", "(built-in /review)", review_text},
};

size_t command_builtin_count(void)
{
    return sizeof builtins / sizeof builtins[0];
}

command_def *command_builtin_parse(size_t i, void (*warn)(void *ctx, const char *msg),
                                   void *warn_ctx, loom_error *err)
{
    if (i >= command_builtin_count())
        return NULL;
    command_def *d = command_def_parse(builtins[i].path, builtins[i].name, builtins[i].text, warn,
                                       warn_ctx, err);
    if (d)
        d->scope = EXT_SCOPE_BUILTIN;
    return d;
}
