/* glob.c — one path segment against one shell-style pattern segment, the
 * matcher the permission rules and the write-target checks share (issue
 * #11 folds the Glob tool's own matcher into it too). Pure; any thread. */
#include "base/glob.h"

#include <stdint.h>

bool glob_segment_match(const char *p, size_t pn, const char *s, size_t sn)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        if (pi < pn) {
            bool ok = false;
            size_t adv = 1;
            if (p[pi] == '?') {
                ok = true;
            } else if (p[pi] == '[') {
                size_t j = pi + 1;
                bool neg = j < pn && (p[j] == '!' || p[j] == '^');
                if (neg)
                    j++;
                size_t first = j;
                bool hit = false;
                while (j < pn && (p[j] != ']' || j == first)) {
                    if (j + 2 < pn && p[j + 1] == '-' && p[j + 2] != ']') {
                        if ((unsigned char)s[si] >= (unsigned char)p[j] &&
                            (unsigned char)s[si] <= (unsigned char)p[j + 2])
                            hit = true;
                        j += 3;
                    } else {
                        if (p[j] == s[si])
                            hit = true;
                        j++;
                    }
                }
                if (j < pn) {
                    ok = hit != neg;
                    adv = j + 1 - pi;
                } else {
                    ok = s[si] == '['; /* no closing ]: a plain '[' */
                }
            } else if (p[pi] == '\\' && pi + 1 < pn) {
                ok = p[pi + 1] == s[si];
                adv = 2;
            } else {
                ok = p[pi] == s[si];
            }
            if (ok) {
                pi += adv;
                si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX)
            return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}
