/* skill_tool.c — the Skill tool: how the model loads a skill's (or a
 * model-invocable command's) instructions when the task calls for them.
 * Its "name" parameter is an enum of exactly what the catalog offers, so
 * the model cannot name a skill it was not shown; the def is made at run
 * time by the session (session.c) whenever the offer changes.
 *
 * Owns the def it builds (name, description, schema text). Not
 * concurrency-safe (it changes the session's activation state): the
 * pipeline runs it alone, on the run's thread. */
#include "ext/skills/skills_internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/str.h"

static const char skill_tool_description[] =
    "Loads a skill: the instructions, scripts and reference files for a kind of task, listed "
    "by name and description under \"# Skills\" in the system prompt. When the task matches a "
    "skill's description, call this tool with that skill's name before doing the task; the "
    "skill's instructions are returned and stay in effect for the rest of the session. Pass "
    "what the task needs in args (e.g. a file name). Do not load a skill the task does not "
    "need, and do not load one that is already active.";

static int skill_tool_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    skill_session *ss = ctx && ctx->self ? ctx->self->impl : NULL;
    if (!ss)
        return tool_error(out, "the Skill tool has no skill session (internal error)");
    const char *name = json_get_str(input, "name", NULL);
    if (!name || !*name)
        return tool_error(out, "name: give the name of one of the skills listed under # Skills");
    const char *args = json_get_str(input, "args", NULL);
    skill_activation a;
    loom_error err = {0};
    if (skill_session_activate(ss, name, args, "tool", ctx->call_id, ctx, &a, &err) != 0)
        return tool_error(out, "%s", err.message);
    str_append(&out->text, a.text.ptr ? a.text.ptr : "", a.text.len);
    if (a.event && ctx->emit) {
        ctx->emit(ctx->emit_ctx, LOOM_EV_SKILL_ACTIVATED, a.event);
        a.event = NULL;
    }
    skill_activation_free(&a);
    return 0;
}

tool_def *skill_tool_build(void *impl, const char *const *names, size_t n)
{
    json_t *en = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(en, json_string(names[i]));
    json_t *schema = json_pack(
        "{s:s, s:{s:{s:s, s:o, s:s}, s:{s:s, s:s}}, s:[s], s:b}", "type", "object", "properties",
        "name", "type", "string", "enum", en, "description",
        "The skill's name, exactly as listed under # Skills.", "args", "type", "string",
        "description", "Optional arguments for the skill (as a person would type them after /name).",
        "required", "name", "additionalProperties", 0);
    tool_def *d = xcalloc(1, sizeof *d);
    d->name = xstrdup("Skill");
    d->description = xstrdup(skill_tool_description);
    d->input_schema = json_dump_compact(schema);
    json_decref(schema);
    d->read_only = false;
    d->concurrency_safe = false;
    /* Loading instructions changes only what the model has been told; the
     * tools a skill then uses go through the pipeline like any other call. */
    d->local_state_only = true;
    d->run = skill_tool_run;
    d->impl = impl;
    return d;
}

void skill_tool_free(tool_def *d)
{
    if (!d)
        return;
    free((char *)d->name);
    free((char *)d->description);
    free((char *)d->input_schema);
    free(d);
}
