/* skills_internal.h — what the files of ext/skills/ share and nothing else
 * includes (the fuzz target and the unit test excepted): one SKILL.md
 * parsed into an entry (skill_def.c), the bounded file reader, and the
 * session's tool hook (skill_tool.c ↔ session.c).
 *
 * An entry is the public skill_def followed by the body, so a catalog
 * hands out &entry->def and finds its entry again by a cast. Owned by the
 * catalog that loaded it; read-only once loaded. */
#ifndef LOOM_EXT_SKILLS_SKILLS_INTERNAL_H
#define LOOM_EXT_SKILLS_SKILLS_INTERNAL_H

#include "ext/skills/skills.h"

typedef struct skill_entry {
    skill_def def;      /* first: a skill_def * of a catalog is a skill_entry * */
    char *body;         /* the text after the frontmatter, blank lines around it trimmed */
} skill_entry;

/* Longest compatibility text (Agent Skills: ≤ 500 characters). */
#define SKILL_COMPATIBILITY_MAX 500

/* Parses the text of one SKILL.md at path, whose folder is named folder
 * (the name must equal it; NULL: not checked). A problem with a key that
 * can be dropped safely (a bad license, an unreadable allowed-tools entry)
 * is passed to warn as "PATH: key 'k': why" and the rest is kept; a
 * problem that makes the skill unusable (no frontmatter, bad or missing
 * name or description) returns NULL with err "PATH: problem". The caller
 * frees the entry with skill_entry_free. */
skill_entry *skill_entry_parse(const char *path, const char *folder, const char *text,
                               void (*warn)(void *ctx, const char *msg), void *warn_ctx,
                               loom_error *err);
void skill_entry_free(skill_entry *e);

/* Is s a valid Agent Skills name (lowercase letters, digits and single
 * hyphens inside, 1 to SKILL_NAME_MAX characters)? */
bool skill_name_valid(const char *s);

/* The Skill tool's run (skill_tool.c), and the session's tool def builder
 * it is installed by (session.c calls skill_tool_build when the offer
 * changes). names: the offered names, n of them. The def and its strings
 * are owned by the caller through skill_tool_free. */
tool_def *skill_tool_build(void *impl, const char *const *names, size_t n);
void skill_tool_free(tool_def *d);

#endif
