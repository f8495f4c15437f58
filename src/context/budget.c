/* budget.c — token budgets written as "+500k" (see budget.h). */
#include "context/budget.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Parses [0-9]+(\.[0-9]+)?[kKmM]? spanning exactly n bytes of s. */
static int64_t amount(const char *s, size_t n)
{
    if (n == 0 || n > 24 || !isdigit((unsigned char)s[0]))
        return -1;
    char buf[32];
    memcpy(buf, s, n);
    buf[n] = '\0';
    double mult = 1;
    char last = buf[n - 1];
    if (last == 'k' || last == 'K')
        mult = 1e3;
    else if (last == 'm' || last == 'M')
        mult = 1e6;
    if (mult > 1)
        buf[--n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (*end || v <= 0 || v * mult > 1e13)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)buf[i]) && buf[i] != '.')
            return -1;
    return (int64_t)(v * mult + 0.5);
}

int64_t budget_parse_amount(const char *s)
{
    return s ? amount(s, strlen(s)) : -1;
}

/* The word at [b, e) as "+amount", or -1. */
static int64_t word(const char *b, const char *e)
{
    if (e - b < 2 || *b != '+')
        return -1;
    return amount(b + 1, (size_t)(e - b - 1));
}

int64_t budget_parse_prompt(const char *prompt)
{
    if (!prompt)
        return 0;
    const char *p = prompt;
    while (isspace((unsigned char)*p))
        p++;
    const char *e = p;
    while (*e && !isspace((unsigned char)*e))
        e++;
    /* "+500k, fix the tests": punctuation may follow the first word. */
    const char *we = e;
    while (we > p && (we[-1] == ',' || we[-1] == ':' || we[-1] == ';' || we[-1] == '.'))
        we--;
    int64_t v = word(p, we);
    if (v > 0)
        return v;
    /* The last word, without sentence punctuation after it. */
    const char *end = prompt + strlen(prompt);
    while (end > prompt && (isspace((unsigned char)end[-1]) || end[-1] == '.' ||
                            end[-1] == '!' || end[-1] == ')'))
        end--;
    const char *b = end;
    while (b > prompt && !isspace((unsigned char)b[-1]))
        b--;
    v = word(b, end);
    return v > 0 ? v : 0;
}
