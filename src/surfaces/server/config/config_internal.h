/* config_internal.h — what the files of src/surfaces/server/config/ share
 * and nothing outside them uses (the fuzz target excepted): the YAML reader
 * that keeps the line of every key (yaml_reader.c), the table-driven
 * checker that turns a jansson node into one of objects.h's structs
 * (schema.c), the checkers of each file (kinds.c, tenants.c) and the set
 * itself (objects.c holds the loader and the lookups, tokens.c the bearer
 * tokens).
 *
 * Why a side table for lines: jansson values carry no position, and its
 * true/false/null are shared singletons, so the line is kept per (parent,
 * key) or (parent, index) rather than per value.
 *
 * Everything here runs while loading, on the loading thread; the finished
 * server_objects is read-only. */
#ifndef LOOM_SERVER_CONFIG_INTERNAL_H
#define LOOM_SERVER_CONFIG_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "surfaces/server/config/objects.h"

#define CFG_MAX_BYTES (1024 * 1024)
#define CFG_MAX_DEPTH 32

/* ---- yaml_reader.c ---- */

typedef struct cfg_line {
    const json_t *parent;
    char *key;     /* NULL for an item of a sequence */
    size_t index;
    int line;
} cfg_line;

typedef struct cfg_doc {
    const char *file;    /* the name messages show ("profiles.yaml") */
    json_t *root;        /* NULL for an empty file */
    int root_line;
    cfg_line *lines;
    size_t n_lines, cap_lines;
} cfg_doc;

/* Reads text (len bytes) as one YAML document into doc->root (an empty
 * text gives root NULL). Refuses aliases, more than one document, nesting
 * deeper than CFG_MAX_DEPTH, texts over CFG_MAX_BYTES, duplicate and
 * non-scalar keys. 0, or -1 with err (config_invalid, "FILE:LINE: …"). */
int cfg_yaml_read(cfg_doc *doc, const char *file, const char *text, size_t len,
                  srv_error *err);
/* Reads path; a missing file is 1 (doc empty), 0 read, -1 err. */
int cfg_yaml_read_file(cfg_doc *doc, const char *file, const char *path, srv_error *err);
void cfg_doc_free(cfg_doc *doc);
/* The line of parent's key (or of item index when key is NULL); the
 * document's first line when unknown. */
int cfg_line_of(const cfg_doc *doc, const json_t *parent, const char *key, size_t index);

/* ---- schema.c ---- */

typedef enum cfg_type {
    CFG_TEXT,    /* char * */
    CFG_ID,      /* char *, [A-Za-z0-9_.-]{1,64} */
    CFG_LIST,    /* str_list of texts */
    CFG_IDLIST,  /* str_list of ids */
    CFG_BOOL,    /* bool */
    CFG_INT,     /* int, min..max */
    CFG_LONG,    /* long, min..max */
    CFG_GROUP,   /* a mapping whose keys (sub) fill the same struct */
    CFG_CUSTOM,  /* checked by the kind's own code; the schema only knows the key */
} cfg_type;

typedef struct cfg_field {
    const char *key;
    cfg_type type;
    size_t off;
    long min, max;
    const char *const *choices;    /* CFG_TEXT/CFG_LIST: the allowed values, NULL-ended */
    const struct cfg_field *sub;   /* CFG_GROUP: its keys, ended by a NULL key */
    const char *same_as;           /* another key of this table filling the same field */
} cfg_field;

/* Where the checker is: the document, the key path so far and the node's
 * place (parent and key, or parent and index), its line looked up only
 * when an error is written. */
typedef struct cfg_at {
    const cfg_doc *doc;
    char path[256];
    const json_t *parent;  /* NULL: the document's root */
    const char *key;
    size_t index;
    srv_error *err;
} cfg_at;

/* Fails with "FILE:LINE: PATH: what" (config_invalid); returns -1. */
int cfg_fail(const cfg_at *at, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* at for parent's key (key) or item (index when key is NULL), inside up. */
void cfg_at_child(cfg_at *out, const cfg_at *up, const json_t *parent, const char *key,
                  size_t index);
/* Checks node (a mapping) against fields and fills base. other_kind names
 * keys that belong to another file, for a hint ("permissions is a policy
 * key: policies go in policies.yaml"). */
int cfg_check_fields(const cfg_at *at, const json_t *node, const cfg_field *fields,
                     void *base, const char *const *foreign, const char *foreign_hint);
/* One node checked as a field of the given type into dst. */
int cfg_check_value(const cfg_at *at, const json_t *v, const cfg_field *f, void *base);
bool cfg_id_valid(const char *s);
/* The known key nearest to key (NULL when none is close). */
const char *cfg_nearest(const char *key, const char *const *known, size_t n);
int cfg_want_mapping(const cfg_at *at, const json_t *v);
void cfg_list_free(str_list *l);
bool cfg_list_has(const str_list *l, const char *s);
json_t *cfg_list_json(const str_list *l);
/* A top-level document: a mapping with exactly the keys allowed (the one
 * this file holds); a key belonging to another file is an error naming it. */
int cfg_check_top(const cfg_doc *doc, const char *const *allowed, srv_error *err);

/* ---- the set (objects.c, kinds.c, tenants.c, tokens.c) ---- */

struct server_objects {
    char *dir;                     /* the config folder (absolute), NULL: none */
    agent_profile *profiles;
    size_t n_profiles;
    policy_set *policies;
    size_t n_policies;
    knowledge_source *sources;
    size_t n_sources;
    tenant_config *tenants;
    size_t n_tenants;
    token_entry *tokens;
    size_t n_tokens;
};

/* Each reads its document into o (root may be NULL: none). */
int cfg_load_profiles(server_objects *o, const cfg_doc *doc, srv_error *err);
int cfg_load_policies(server_objects *o, const cfg_doc *doc, srv_error *err);
int cfg_load_sources(server_objects *o, const cfg_doc *doc, srv_error *err);
int cfg_load_tenants(server_objects *o, const cfg_doc *doc, const char *default_workspace,
                     srv_error *err);
/* Tokens of tenants.yaml (after the tenants). */
int cfg_load_tokens(server_objects *o, const cfg_doc *doc, srv_error *err);
/* The references between files: profile → policies and sources, source →
 * tenant and project, policy/profile → tenant. */
int cfg_cross_check(server_objects *o, const cfg_doc *profiles, const cfg_doc *policies,
                    const cfg_doc *sources, srv_error *err);
/* Visible to tenant_id: global (owner NULL), or the same tenant. */
bool cfg_visible(const char *owner, const char *tenant_id);
/* A path relative to the config folder made absolute and folded. */
char *cfg_resolve_path(const server_objects *o, const char *p);

void cfg_profile_free(agent_profile *p);
void cfg_policy_free(policy_set *p);
void cfg_source_free(knowledge_source *s);
void cfg_tenant_free(tenant_config *t);
void cfg_token_free(token_entry *t);

/* Loads one file's text of the given kind into a fresh set (the fuzz
 * target; kind: 'p' profiles, 'o' policies, 'k' sources, 't' tenants). */
server_objects *cfg_load_text(char kind, const char *text, size_t len, srv_error *err);

#endif
