/* memory_sanitize.c — the path regexes of seed 001 §11.5 and the tag neutralizer
 * (see memory_sanitize.h). The patterns are compiled once per call: recall runs
 * once per run over at most a handful of entries, so a cache would be
 * process-wide state for no measurable gain. Threading: none. */
#include "context/memory_sanitize.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "base/utf8.h"

/* The terminators: blanks, quotes, backtick, , ; ) ] } and the CJK
 * punctuation the seed lists (）】，。；). */
#define PATH_END "[^\\s\"'`,;)\\]}\\x{FF09}\\x{3011}\\x{FF0C}\\x{3002}\\x{FF1B}]"

/* seed 001 §11.5, in the seed's order. The lookbehinds keep URLs
 * (https://host/home/…) and API paths (/v1/users) out. */
static const char *const path_patterns[] = {
    "(?<![\\w])[A-Za-z]:[\\\\/]" PATH_END "*",
    "(?<![\\w/])~/" PATH_END "*",
    "(?<![\\w:/~.-])/(?:Users|home|Volumes|private|tmp|var|mnt|media|opt|srv|root|data|"
    "Applications|Library)(?=/|$|\\s)" PATH_END "*",
};

/* Replaces every match of pattern in *s; counts them into *n. */
static void replace_all(loom_str *s, const char *pattern, size_t *n)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &ec, &eo, NULL);
    if (!re)
        return; /* a constant pattern: a test catches it */
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    loom_str out = LOOM_STR_INIT;
    const char *subj = str_cstr(s);
    size_t len = s->len, at = 0;
    while (at <= len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)subj, len, at, 0, md, NULL);
        if (rc < 0)
            break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        str_append(&out, subj + at, ov[0] - at);
        str_puts(&out, "[path omitted]");
        (*n)++;
        if (ov[1] == ov[0]) { /* an empty match cannot happen here, but never loop */
            if (ov[1] < len)
                str_append(&out, subj + ov[1], 1);
            at = ov[1] + 1;
        } else {
            at = ov[1];
        }
    }
    if (at < len)
        str_append(&out, subj + at, len - at);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    str_free(s);
    *s = out;
}

static bool tag_char(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '!' || c == '?';
}

char *memory_sanitize(const char *text, size_t len, memory_sanitize_stats *st)
{
    memory_sanitize_stats local = {0};
    size_t clean_len = 0;
    char *clean = utf8_sanitize(text ? text : "", text ? len : 0, &clean_len);
    loom_str s = LOOM_STR_INIT;
    str_append(&s, clean, clean_len);
    free(clean);
    for (size_t i = 0; i < sizeof path_patterns / sizeof *path_patterns; i++)
        replace_all(&s, path_patterns[i], &local.paths);
    loom_str out = LOOM_STR_INIT;
    const char *p = str_cstr(&s);
    for (size_t i = 0; i < s.len; i++) {
        if (p[i] != '<') {
            str_putc(&out, p[i]);
            continue;
        }
        size_t j = i + 1;
        while (j < s.len && (p[j] == ' ' || p[j] == '\t' || p[j] == '\n' || p[j] == '\r' ||
                             p[j] == '/'))
            j++;
        if (j < s.len && tag_char((unsigned char)p[j])) {
            str_puts(&out, "&lt;");
            local.tags++;
        } else {
            str_putc(&out, '<');
        }
    }
    str_free(&s);
    if (st)
        *st = local;
    return str_steal(&out);
}
