/* worktree_tools.c — EnterWorktree and ExitWorktree, Claude Code's names
 * and inputs ({name?}; {action: "keep"|"remove", discard_changes?}): the
 * session moves into a new git worktree on a new branch, and back. One
 * file for the pair: they are the two ends of one move. The git work and
 * the session's directory are the API's (tool_ctx.worktree_enter/exit,
 * api/worktree.c, over agents/worktree.c's sub-agent worktrees); this file
 * checks the input and says what happened. Run's thread, alone (not
 * concurrency-safe: the directory of every later call changes). */
#include "tools/builtin/builtin.h"

#include <string.h>

#include "base/json.h"

#define WORKTREE_NAME_MAX 64

static int enter_validate(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    (void)ctx;
    const char *name = json_get_str(input, "name", NULL);
    if (!name)
        return 0;
    size_t n = strlen(name);
    bool ok = n > 0 && n <= WORKTREE_NAME_MAX;
    for (size_t i = 0; ok && i < n; i++)
        ok = (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
             (name[i] >= '0' && name[i] <= '9') || name[i] == '-' || name[i] == '_';
    if (!ok) {
        str_printf(why, "name must be 1 to %d letters, digits, '-' or '_' (it names the "
                        "worktree's folder and branch).", WORKTREE_NAME_MAX);
        return 1;
    }
    return 0;
}

static int enter_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    if (!ctx->worktree_enter)
        return tool_error(out, "EnterWorktree is only for the main agent's session (a "
                               "sub-agent gets a worktree with isolation: \"worktree\").");
    loom_str why = LOOM_STR_INIT;
    if (enter_validate(input, ctx, &why) != 0) {
        tool_error(out, "%s", str_cstr(&why));
        str_free(&why);
        return 0;
    }
    str_free(&why);
    return ctx->worktree_enter(ctx->worktree_ctx, json_get_str(input, "name", NULL), out);
}

const tool_def tool_enter_worktree = {
    .name = "EnterWorktree",
    .description =
        "Creates an isolated git worktree (under .loom/worktrees/, on a new branch from HEAD) "
        "and moves this session into it: every later file and command works there. Use it only "
        "when the user asks for a worktree or isolated work. Leave with ExitWorktree.",
    .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
                    "\"description\":\"Optional name for the worktree. A random name is "
                    "generated if not provided.\"}},\"additionalProperties\":false}",
    .validate = enter_validate,
    .run = enter_run,
};

static int exit_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    if (!ctx->worktree_exit)
        return tool_error(out, "ExitWorktree is only for the main agent's session.");
    const char *action = json_get_str(input, "action", "");
    bool remove = !strcmp(action, "remove");
    if (!remove && strcmp(action, "keep") != 0)
        return tool_error(out, "action must be \"keep\" or \"remove\".");
    return ctx->worktree_exit(ctx->worktree_ctx, remove,
                              json_is_true(json_object_get(input, "discard_changes")), out);
}

const tool_def tool_exit_worktree = {
    .name = "ExitWorktree",
    .description =
        "Leaves the worktree EnterWorktree made in this session and returns to the original "
        "directory. action \"keep\" leaves the worktree and its branch on disk; \"remove\" "
        "deletes both, and refuses while the worktree has uncommitted files or commits unless "
        "discard_changes is true. Only when the user asks to leave the worktree.",
    .input_schema =
        "{\"type\":\"object\",\"properties\":{\"action\":{\"type\":\"string\",\"enum\":"
        "[\"keep\",\"remove\"],\"description\":\"\\\"keep\\\" leaves the worktree and branch on "
        "disk; \\\"remove\\\" deletes both.\"},\"discard_changes\":{\"type\":\"boolean\","
        "\"description\":\"Required true when action is \\\"remove\\\" and the worktree has "
        "uncommitted files or unmerged commits.\"}},\"required\":[\"action\"],"
        "\"additionalProperties\":false}",
    .run = exit_run,
};
