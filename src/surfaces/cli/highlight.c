/* highlight.c — the languages of highlight.h as rows of one table (names,
 * keywords, comment markers, quotes) and one scanner over them. The scanner
 * never looks further than the line it is given. Any thread. */
#include "surfaces/cli/highlight.h"

#include <string.h>

struct hl_lang {
    const char *names;      /* space-separated, each word of a fence's info */
    const char *keywords;   /* space-separated */
    const char *line_comment;  /* "//", "#" or NULL */
    const char *block_open, *block_close; /* NULL when none */
    const char *quotes;     /* characters that open a string */
    bool triple;            /* Python's """ and ''' */
};

static const hl_lang langs[] = {
    {"c h cpp c++ cc hpp cxx",
     "auto break case char const continue default do double else enum extern float for goto "
     "if inline int long register restrict return short signed sizeof static struct switch "
     "typedef union unsigned void volatile while bool true false NULL size_t class namespace "
     "template typename public private protected virtual new delete nullptr #include #define "
     "#if #ifdef #ifndef #endif #else #elif #pragma",
     "//", "/*", "*/", "\"'", false},
    {"sh bash shell zsh console",
     "if then else elif fi case esac for while until do done in function return local export "
     "set unset readonly shift exit break continue echo cd source trap eval exec",
     "#", NULL, NULL, "\"'", false},
    {"py python python3",
     "and as assert async await break class continue def del elif else except False finally "
     "for from global if import in is lambda None nonlocal not or pass raise return True try "
     "while with yield self print",
     "#", NULL, NULL, "\"'", true},
    {"js javascript ts typescript jsx tsx mjs node",
     "break case catch class const continue debugger default delete do else export extends "
     "false finally for function if import in instanceof let new null return super switch this "
     "throw true try typeof undefined var void while with yield async await of static "
     "interface type enum implements private public protected readonly as from",
     "//", "/*", "*/", "\"'`", false},
    {"json jsonc json5", "true false null", NULL, NULL, NULL, "\"", false},
    {"go golang",
     "break case chan const continue default defer else fallthrough for func go goto if "
     "import interface map package range return select struct switch type var true false nil "
     "int string bool byte rune error",
     "//", "/*", "*/", "\"'`", false},
    {"rust rs",
     "as async await break const continue crate dyn else enum extern false fn for if impl in "
     "let loop match mod move mut pub ref return self Self static struct super trait true type "
     "unsafe use where while Some None Ok Err",
     "//", "/*", "*/", "\"", false},
};

static bool has_word(const char *list, const char *w, size_t n)
{
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, " ");
        if (k == n && !memcmp(p, w, n))
            return true;
        p += k;
        p += *p == ' ';
    }
    return false;
}

const hl_lang *highlight_lang(const char *name, size_t n)
{
    if (!name || !n)
        return NULL;
    char low[24];
    if (n >= sizeof low)
        return NULL;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
    for (size_t i = 0; i < sizeof langs / sizeof *langs; i++)
        if (has_word(langs[i].names, low, n))
            return &langs[i];
    return NULL;
}

const char *highlight_sgr(hl_class cls)
{
    switch (cls) {
    case HL_KEYWORD: return "35";
    case HL_STRING: return "32";
    case HL_COMMENT: return "2";
    case HL_NUMBER: return "33";
    default: return "";
    }
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || (unsigned char)c >= 0x80;
}

static bool starts(const char *s, size_t n, size_t i, const char *tok)
{
    size_t k = tok ? strlen(tok) : 0;
    return k && i + k <= n && !memcmp(s + i, tok, k);
}

/* From i inside a string opened by st->in_string: to its end (past the
 * closing quote) or the line's end. */
static size_t string_end(hl_state *st, const char *s, size_t n, size_t i)
{
    char q = st->in_string;
    while (i < n) {
        if (s[i] == '\\') {
            i += i + 1 < n ? 2 : 1;
            continue;
        }
        if (s[i] == q && (!st->triple || (i + 2 < n && s[i + 1] == q && s[i + 2] == q))) {
            i += st->triple ? 3 : 1;
            st->in_string = 0;
            st->triple = false;
            return i;
        }
        i++;
    }
    /* Single-quoted strings end with the line in most of these languages;
     * Python's triple quotes and JS/Go backticks go on. */
    if (!st->triple && q != '`')
        st->in_string = 0;
    return n;
}

void highlight_line(const hl_lang *L, hl_state *st, const char *s, size_t n,
                    void (*emit)(void *ctx, hl_class cls, const char *s, size_t n), void *ctx)
{
    size_t i = 0, plain = 0;
#define FLUSH()                                                 \
    do {                                                        \
        if (i > plain)                                          \
            emit(ctx, HL_PLAIN, s + plain, i - plain);          \
    } while (0)
    if (!L) {
        if (n)
            emit(ctx, HL_PLAIN, s, n);
        return;
    }
    if (st->in_comment) {
        size_t j = 0;
        while (j < n && !starts(s, n, j, L->block_close))
            j++;
        if (j < n) {
            j += strlen(L->block_close);
            st->in_comment = false;
        }
        if (j)
            emit(ctx, HL_COMMENT, s, j);
        i = plain = j;
    } else if (st->in_string) {
        size_t j = string_end(st, s, n, 0);
        if (j)
            emit(ctx, HL_STRING, s, j);
        i = plain = j;
    }
    while (i < n) {
        char c = s[i];
        bool word_start = i == 0 || !word_char(s[i - 1]);
        if (starts(s, n, i, L->line_comment) &&
            (strcmp(L->line_comment, "#") != 0 || i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t')) {
            FLUSH();
            emit(ctx, HL_COMMENT, s + i, n - i);
            return;
        }
        if (starts(s, n, i, L->block_open)) {
            FLUSH();
            size_t j = i + strlen(L->block_open);
            while (j < n && !starts(s, n, j, L->block_close))
                j++;
            if (j < n)
                j += strlen(L->block_close);
            else
                st->in_comment = true;
            emit(ctx, HL_COMMENT, s + i, j - i);
            i = plain = j;
            continue;
        }
        if (strchr(L->quotes, c) && c) {
            FLUSH();
            st->in_string = c;
            st->triple = L->triple && i + 2 < n && s[i + 1] == c && s[i + 2] == c;
            size_t j = string_end(st, s, n, i + (st->triple ? 3 : 1));
            emit(ctx, HL_STRING, s + i, j - i);
            i = plain = j;
            continue;
        }
        if (word_start && ((c >= '0' && c <= '9') || (c == '-' && i + 1 < n && s[i + 1] >= '0' &&
                                                      s[i + 1] <= '9' && !L->block_open && !L->line_comment))) {
            FLUSH();
            size_t j = i + 1;
            while (j < n && (word_char(s[j]) || s[j] == '.'))
                j++;
            emit(ctx, HL_NUMBER, s + i, j - i);
            i = plain = j;
            continue;
        }
        if (word_start && (word_char(c) || c == '#')) {
            size_t j = i + 1;
            while (j < n && word_char(s[j]))
                j++;
            if (has_word(L->keywords, s + i, j - i)) {
                FLUSH();
                emit(ctx, HL_KEYWORD, s + i, j - i);
                plain = j;
            }
            i = j;
            continue;
        }
        i++;
    }
    FLUSH();
#undef FLUSH
}
