/* sources.c — which configuration files a config or an agent looked at:
 * the settings files (Loom's and Claude Code's, as config.c read and
 * trust-marked them), the project's .mcp.json, and the instruction files
 * of the memory block, each loaded, partial or skipped with why. What
 * `/status` and `loom doctor` print (docs/compat.md).
 *
 * Reads files (the .mcp.json check, the memory walk of a config) but keeps
 * no state; thread-safe for distinct handles. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/internal.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/str.h"
#include "context/memory.h"
#include "sandbox/sandbox_policy.h"

static json_t *entry(const char *path, const char *kind, const char *level, const char *origin,
                     const char *state, const char *why)
{
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "path", path, "kind", kind, "level", level,
                          "origin", origin, "state", state);
    if (why)
        json_object_set_new(o, "why", json_string(why));
    return o;
}

/* The project's .mcp.json: loaded, or skipped when it is not JSON or
 * strict_mcp_config leaves it out. Absent: nothing. */
static void add_mcp(json_t *files, const json_t *values, const char *workspace)
{
    if (!workspace)
        return;
    loom_str path = LOOM_STR_INIT;
    str_printf(&path, "%s/.mcp.json", workspace);
    struct stat st;
    if (stat(path.ptr, &st) != 0) {
        str_free(&path);
        return;
    }
    bool strict = false;
    loom_status ignored;
    api_option_bool(values, "strict_mcp_config", &strict, &ignored);
    json_t *doc = NULL;
    loom_error err;
    loom_error_clear(&err);
    if (strict)
        json_array_append_new(files, entry(path.ptr, "mcp", "project", "loom", "skipped",
                                           "strict_mcp_config: only the --mcp-config servers "
                                           "count"));
    else if (settings_read(path.ptr, &doc, &err) != 0)
        json_array_append_new(files,
                              entry(path.ptr, "mcp", "project", "loom", "skipped", err.message));
    else
        json_array_append_new(files, entry(path.ptr, "mcp", "project", "loom", "loaded",
                                           "its servers start once approved (loom mcp list)"));
    json_decref(doc);
    str_free(&path);
}

/* Where a memory file belongs: a user file lies under Loom's or Claude
 * Code's home; an import or index elsewhere is the project's. */
static const char *memory_level(const memory_file *f, const char *home, const char *claude_home)
{
    if (f->kind == MEMORY_USER)
        return "user";
    if (f->kind == MEMORY_PROJECT)
        return "project";
    size_t h = strlen(home), c = strlen(claude_home);
    if ((!strncmp(f->path, home, h) && f->path[h] == '/') ||
        (!strncmp(f->path, claude_home, c) && f->path[c] == '/'))
        return "user";
    return "project";
}

static const char *memory_origin(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strcmp(base, "CLAUDE.md") == 0 ? "claude" : "loom";
}

static void add_memory(json_t *files, const memory_report *rep)
{
    char *home = loom_home();
    char *claude_home = settings_claude_home();
    for (size_t i = 0; i < rep->count; i++) {
        const memory_file *f = &rep->files[i];
        json_array_append_new(files, entry(f->path, "memory",
                                           memory_level(f, home, claude_home),
                                           memory_origin(f->path), "loaded", NULL));
    }
    for (size_t i = 0; i < rep->nskipped; i++) {
        const memory_file *f = &rep->skipped[i];
        json_array_append_new(files, entry(f->path, "memory",
                                           memory_level(f, home, claude_home),
                                           memory_origin(f->path), "skipped", f->why));
    }
    free(claude_home);
    free(home);
}

/* The document both functions return; warnings and notices: the
 * settings schema's warnings and the trust notices (arrays, may be NULL). */
static json_t *document(const json_t *settings, const json_t *values, const char *workspace,
                        bool trusted, const memory_report *rep, const json_t *warnings,
                        const json_t *notices)
{
    json_t *files = settings ? json_deep_copy(settings) : json_array();
    add_mcp(files, values, workspace);
    add_memory(files, rep);
    return json_pack("{s:o,s:b,s:b,s:o,s:o}", "files", files, "compat_claude",
                     api_compat_claude(values, NULL), "trusted", trusted, "warnings",
                     warnings ? json_deep_copy(warnings) : json_array(), "notices",
                     notices ? json_deep_copy(notices) : json_array());
}

static char *dump_new(json_t *o)
{
    char *text = json_dump_compact(o);
    json_decref(o);
    return text;
}

char *loom_config_sources_json(const loom_config *cfg)
{
    if (!cfg || !cfg->workspace)
        return NULL;
    memory_report rep;
    char *block = memory_render(cfg->workspace, cfg->trusted,
                                api_compat_claude(cfg->values, (json_t *const *)cfg->files), NULL,
                                &rep);
    free(block);
    json_t *o = document(cfg->sources, cfg->values, cfg->workspace, cfg->trusted, &rep,
                         cfg->warnings, cfg->notices);
    memory_report_free(&rep);
    return dump_new(o);
}

char *loom_agent_sources_json(loom_agent *agent)
{
    if (!agent)
        return NULL;
    json_t *o = document(agent->sources, agent->values, agent->cwd, agent->trusted,
                         &agent->memory, agent->warnings, agent->notices);
    /* The sandbox the agent's commands get (resolve_sandbox in agent.c). */
    json_t *sb = json_pack("{s:b}", "enabled", agent->sandbox && agent->sandbox->enabled);
    if (agent->sandbox_error)
        json_object_set_new(sb, "error", json_string(agent->sandbox_error));
    json_object_set_new(o, "sandbox", sb);
    return dump_new(o);
}
