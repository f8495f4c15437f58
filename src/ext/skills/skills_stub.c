/* skills_stub.c — TEMPORARY: an empty skills module so the wiring builds
 * before ext/skills lands. The skills helper deletes this file. */
#include <stdlib.h>
#include <string.h>

#include "ext/skills/skills.h"

struct skill_catalog { int unused; };
struct skill_session { int unused; };

skill_catalog *skill_catalog_load(const ext_source_opts *o, loom_error *err)
{
    (void)o; (void)err;
    return calloc(1, sizeof(skill_catalog));
}
void skill_catalog_free(skill_catalog *c) { free(c); }
size_t skill_catalog_count(const skill_catalog *c) { (void)c; return 0; }
const skill_def *skill_catalog_at(const skill_catalog *c, size_t i) { (void)c; (void)i; return NULL; }
const skill_def *skill_catalog_find(const skill_catalog *c, const char *n) { (void)c; (void)n; return NULL; }
size_t skill_catalog_warning_count(const skill_catalog *c) { (void)c; return 0; }
const char *skill_catalog_warning(const skill_catalog *c, size_t i) { (void)c; (void)i; return NULL; }
char **skill_files(const skill_def *d) { (void)d; return calloc(1, sizeof(char *)); }
skill_session *skill_session_new(const skill_session_opts *o) { (void)o; return calloc(1, sizeof(skill_session)); }
void skill_session_free(skill_session *ss) { free(ss); }
void skill_session_set_registry(skill_session *ss, const tool_registry *reg) { (void)ss; (void)reg; }
const tool_def *skill_session_tool(skill_session *ss) { (void)ss; return NULL; }
void skill_session_catalog_text(skill_session *ss, loom_str *out, int64_t *tokens, size_t *offered)
{
    (void)ss; (void)out;
    if (tokens) *tokens = 0;
    if (offered) *offered = 0;
}
json_t *skill_session_offer_json(skill_session *ss) { (void)ss; return json_pack("{s:[],s:i,s:b}", "skills", "tokens", 0, "truncated", 0); }
void skill_session_active_text(skill_session *ss, bool (*present)(void *, const char *), void *ctx, loom_str *out)
{ (void)ss; (void)present; (void)ctx; (void)out; }
void skill_activation_free(skill_activation *a) { str_free(&a->text); json_decref(a->event); }
int skill_session_activate(skill_session *ss, const char *name, const char *args, const char *via,
                           const char *call_id, tool_ctx *ctx, skill_activation *out, loom_error *err)
{
    (void)ss; (void)args; (void)via; (void)call_id; (void)ctx;
    memset(out, 0, sizeof *out);
    return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "no skill named %s", name);
}
void skill_session_run_begin(skill_session *ss) { (void)ss; }
void skill_session_observe_call(skill_session *ss, const char *t, const json_t *in, const char *cwd) { (void)ss; (void)t; (void)in; (void)cwd; }
json_t *skill_session_run_report(skill_session *ss) { (void)ss; return json_pack("{s:[],s:[]}", "offered", "activated"); }
