/* structured.c — the StructuredOutput tool of a sub-agent with an
 * output_schema, and the reminder before_final gives while the call is
 * owed (structured.h).
 *
 * Owns the tool_def it makes (name, description, schema text, and the
 * wrapping flag in impl). Threading: see structured.h.
 */
#include "agents/structured.h"

#include <stdlib.h>
#include <string.h>

#include "agents/tree.h"
#include "base/json.h"
#include "base/str.h"
#include "tools/schema.h"

typedef struct structured_impl {
    json_t *schema;   /* the tool's input schema (parsed) */
    bool wrapped;     /* the output schema is under "value" */
} structured_impl;

/* A verification verdict's steps must be commands the agent ran (seed 000
 * row 4.5a, anti-pattern 1): the first that is not, or NULL. */
static const char *structured_unrun_step(spawn_node *n, const json_t *value)
{
    const json_t *steps = json_object_get(value, "steps"), *step;
    size_t i;
    json_array_foreach(steps, i, step) {
        const char *cmd = json_string_value(json_object_get(step, "command"));
        if (cmd && !spawn_node_ran_command(n, cmd))
            return cmd;
    }
    return NULL;
}

static int run_structured(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    spawn_node *n = ctx->spawn;
    const structured_impl *im = ctx->self ? ctx->self->impl : NULL;
    if (!n || !im)
        return tool_error(out, "StructuredOutput: only a sub-agent with an output schema has it");
    if (n->structured)
        return tool_error(out, "StructuredOutput: already given; end your turn now");
    n->structured_attempts++;
    loom_str why = LOOM_STR_INIT;
    if (schema_validate(im->schema, input, &why) != 0) {
        int left = STRUCTURED_MAX_ATTEMPTS - n->structured_attempts;
        tool_error(out,
                   "StructuredOutput: the value does not match the schema:\n%s\n%s",
                   str_cstr(&why),
                   left > 0 ? "Fix it and call StructuredOutput again."
                            : "No attempts are left: end your turn with a plain answer.");
        str_free(&why);
        return 0;
    }
    str_free(&why);
    const json_t *value = im->wrapped ? json_object_get(input, "value") : input;
    const char *unrun = n->def && n->def->role == AGENT_ROLE_VERIFICATION
                            ? structured_unrun_step(n, value)
                            : NULL;
    if (unrun) {
        tool_error(out,
                   "StructuredOutput: a step names the command \"%s\", which you did not run "
                   "here. Run it with Bash first and report what it printed, or leave the step "
                   "out: a verdict stands only on commands you ran.",
                   unrun);
        return 0;
    }
    n->structured = json_deep_copy(value);
    str_puts(&out->text, "Structured output accepted. End your turn now.");
    return 0;
}

tool_def *structured_tool_new(const json_t *schema, loom_error *err)
{
    if (schema_check(schema, err) != 0)
        return NULL;
    const char *type = json_string_value(json_object_get(schema, "type"));
    bool wrapped = !type || strcmp(type, "object") != 0;
    json_t *input = wrapped ? json_pack("{s:s,s:{s:O},s:[s],s:b}", "type", "object",
                                        "properties", "value", schema, "required", "value",
                                        "additionalProperties", 0)
                            : json_deep_copy(schema);
    structured_impl *im = xcalloc(1, sizeof *im);
    im->schema = input;
    im->wrapped = wrapped;
    tool_def *d = xcalloc(1, sizeof *d);
    d->name = "StructuredOutput";
    d->description = wrapped
                         ? "Gives your final answer as structured data: call it once, with "
                           "{\"value\": <your answer>} matching the schema, before you end."
                         : "Gives your final answer as structured data: call it once, with "
                           "input matching the schema, before you end your turn.";
    d->input_schema = json_dump_compact(input);
    d->read_only = true;
    d->local_state_only = true;
    d->run = run_structured;
    d->impl = im;
    return d;
}

void structured_tool_free(tool_def *def)
{
    if (!def)
        return;
    structured_impl *im = def->impl;
    if (im) {
        json_decref(im->schema);
        free(im);
    }
    free((char *)def->input_schema);
    free(def);
}

char *structured_before_final(spawn_node *n, const char *final_text)
{
    (void)final_text;
    if (!n || !n->output_schema || n->structured)
        return NULL;
    if (n->structured_attempts >= STRUCTURED_MAX_ATTEMPTS ||
        n->structured_reminders >= STRUCTURED_MAX_REMINDERS)
        return NULL;
    n->structured_reminders++;
    return xstrdup("You must give your final answer by calling the StructuredOutput tool with "
                   "a value that matches its schema. Call it now, then end your turn.");
}
