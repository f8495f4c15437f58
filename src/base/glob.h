/* glob.h — the one glob of Loom: shell-style patterns over names and
 * '/'-separated paths, shared by the permission rules (policy/rule), the
 * write-target checks (policy/risk_writes) and the Glob/Grep file walk
 * (tools/builtin/walk).
 *
 * Syntax, in a segment (one path component):
 *   *       any run of bytes          ?   one byte
 *   [set]   one byte of the set: ranges a-z, '!' or '^' negates, a ']'
 *           first is a member, '\' escapes a member; a '[' with no closing
 *           ']' is a plain '['
 *   \x      a literal x
 * Over a path: '*', '?' and sets never match '/'; a whole-component "**"
 * matches any number of components. Braces {a,b} are not part of matching:
 * glob_expand_braces turns one pattern into its alternatives first, for the
 * callers whose syntax has them (the Glob tool, ripgrep --glob).
 * No leading-dot rule: the caller decides whether '*' may match a dotfile.
 *
 * Pure functions; any thread. */
#ifndef LOOM_BASE_GLOB_H
#define LOOM_BASE_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/* Does pattern p[0..pn) match the whole of s[0..sn)? No '/' handling: the
 * caller splits paths into segments. */
bool glob_segment_match(const char *p, size_t pn, const char *s, size_t sn);

/* A '/'-separated path against a pattern, component by component (empty
 * components are dropped on both sides; a '\' in the pattern escapes the
 * next byte, a '/' too). A trailing "**" needs at least one component, so
 * "dir/<globstar>" does not match a file named dir. */
bool glob_path_match(const char *pattern, const char *path);

/* gitignore's reading of the same pattern: it also matches everything
 * inside a directory it matches ("src" and "src/<globstar>" both cover
 * src/a/b.c; a trailing "**" may match nothing). The permission rules'
 * path patterns read this way. */
bool glob_path_covers(const char *pattern, const char *path);

/* Patterns where only '*' is special ('?', '[' and '\' are themselves): the
 * command texts of Bash rules and other tools' rule specifiers. With
 * cross_slash '*' matches any run of bytes; without, '*' stays within a
 * '/'-separated component, "**" crosses them and "<globstar>/" may also
 * match no directory at all. */
bool glob_star_match(const char *p, const char *s, bool cross_slash);

/* Could some text that starts with s match the '*'-only pattern p (with
 * cross_slash)? True when all of s is consumed by a prefix of p: what
 * follows s can then supply the rest. */
bool glob_star_prefix(const char *p, const char *s);

/* Expands shell-style {a,b} alternatives (nested allowed, '\' escapes a
 * brace or comma, a brace group without a comma stays literal, an
 * unbalanced one too). Returns a NULL-terminated array of malloc'd strings,
 * at most 1024 of them; free it with glob_free_list. */
char **glob_expand_braces(const char *pattern);
void glob_free_list(char **list);

/* True when s holds any of * ? [ { \ (is not a plain path). */
bool glob_has_magic(const char *s);

#endif
