/* glob.h — shell-style matching of one path segment: '*' (any run of
 * bytes), '?' (one byte), '[set]' with ranges and '!'/'^' negation, and
 * '\\x' for a literal x; a '[' with no closing ']' is a plain '['. No '/'
 * handling (the caller splits paths into segments) and no leading-dot rule
 * (the caller decides whether '*' may match a dotfile). */
#ifndef LOOM_BASE_GLOB_H
#define LOOM_BASE_GLOB_H

#include <stdbool.h>
#include <stddef.h>

/* Does pattern p[0..pn) match the whole of s[0..sn)? */
bool glob_segment_match(const char *p, size_t pn, const char *s, size_t sn);

#endif
