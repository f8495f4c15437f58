/* html_text.c — HTML to readable text for WebFetch, and the UTF-8 clean-up
 * every fetched text goes through (see html_text.h).
 *
 * One forward pass over the bytes, with a tokenizer that knows just enough
 * HTML to find tags, comments, attribute values (quoted or not) and the raw
 * text of <script>/<style>, which may contain anything, "</p>" included.
 * Text goes through a small writer that owes spaces and newlines instead of
 * writing them, so runs of whitespace and of block boundaries collapse to
 * one space or at most one blank line, and nothing dangles at either end.
 * Every stack is fixed-size with a saturating depth, so hostile nesting costs
 * nothing but fidelity.
 */
#include "tools/builtin/html_text.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/utf8.h"
#include "base/str.h"

/* Lists nested deeper than this share the deepest indentation. */
#define LIST_DEPTH 16
/* Links whose href is longer than this are shown as text only. */
#define HREF_MAX 2048
/* Tag names longer than this are no tag we treat specially. */
#define TAG_NAME_MAX 15

/* ---- UTF-8 ---- */

size_t utf8_put(char *buf, unsigned long cp)
{
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        cp = 0xFFFD;
    if (cp < 0x80) {
        buf[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        buf[0] = (char)(0xC0 | (cp >> 6));
        buf[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        buf[0] = (char)(0xE0 | (cp >> 12));
        buf[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        buf[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    buf[0] = (char)(0xF0 | (cp >> 18));
    buf[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    buf[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    buf[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Windows-1252's 0x80-0x9F, where it differs from ISO-8859-1; 0 = unused.
 * HTML also maps numeric references in this range through it. */
static const unsigned short cp1252_high[32] = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178,
};

char *text_to_utf8(const char *text, size_t len, int latin1, size_t *out_len)
{
    loom_str out = LOOM_STR_INIT;
    str_reserve(&out, len + 1);
    const unsigned char *s = (const unsigned char *)text;
    char buf[4];
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        if (c == '\r') {
            str_putc(&out, '\n');
            i += (i + 1 < len && s[i + 1] == '\n') ? 2 : 1;
            continue;
        }
        if (c == 0) {
            str_append(&out, buf, utf8_put(buf, 0xFFFD));
            i++;
            continue;
        }
        if (latin1) {
            unsigned long cp = c;
            if (c >= 0x80 && c <= 0x9F)
                cp = cp1252_high[c - 0x80] ? cp1252_high[c - 0x80] : 0xFFFD;
            str_append(&out, buf, utf8_put(buf, cp));
            i++;
            continue;
        }
        size_t n = utf8_seq_len(s + i, len - i);
        if (n == 0) {
            str_append(&out, buf, utf8_put(buf, 0xFFFD));
            i++;
        } else {
            str_append(&out, s + i, n);
            i += n;
        }
    }
    if (out_len)
        *out_len = out.len;
    if (out.len == 0) {
        /* str_reserve allocated, but nothing wrote the terminator. */
        str_free(&out);
        return xstrdup("");
    }
    return str_steal(&out);
}

/* ---- entities ---- */

typedef struct entity {
    const char *name;
    unsigned short cp; /* 0: the entity stands for nothing (soft hyphen) */
} entity;

/* The named references that turn up in real pages' text; others are left
 * as written, which a reader still understands. nbsp is a plain space here:
 * the point is readable text, not preserved layout. */
static const entity entities[] = {
    {"amp", '&'},      {"lt", '<'},       {"gt", '>'},       {"quot", '"'},
    {"apos", '\''},    {"nbsp", ' '},     {"ensp", ' '},     {"emsp", ' '},
    {"thinsp", ' '},   {"shy", 0},        {"zwnj", 0},       {"zwj", 0},
    {"copy", 0xA9},    {"reg", 0xAE},     {"trade", 0x2122}, {"mdash", 0x2014},
    {"ndash", 0x2013}, {"hellip", 0x2026}, {"laquo", 0xAB},  {"raquo", 0xBB},
    {"lsquo", 0x2018}, {"rsquo", 0x2019}, {"ldquo", 0x201C}, {"rdquo", 0x201D},
    {"sbquo", 0x201A}, {"bdquo", 0x201E}, {"bull", 0x2022},  {"middot", 0xB7},
    {"euro", 0x20AC},  {"pound", 0xA3},   {"yen", 0xA5},     {"cent", 0xA2},
    {"sect", 0xA7},    {"para", 0xB6},    {"deg", 0xB0},     {"plusmn", 0xB1},
    {"times", 0xD7},   {"divide", 0xF7},  {"frac12", 0xBD},  {"frac14", 0xBC},
    {"frac34", 0xBE},  {"larr", 0x2190},  {"rarr", 0x2192},  {"uarr", 0x2191},
    {"darr", 0x2193},  {"harr", 0x2194},  {"micro", 0xB5},   {"iexcl", 0xA1},
    {"iquest", 0xBF},  {"dagger", 0x2020}, {"prime", 0x2032}, {"le", 0x2264},
    {"ge", 0x2265},    {"ne", 0x2260},    {"minus", 0x2212}, {"infin", 0x221E},
};

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Decodes the reference starting at p[0] == '&'. Returns the bytes it
 * covers (0 when it is no reference we know: the '&' is then literal) and
 * writes its UTF-8 into buf (*n bytes, possibly 0). */
static size_t decode_entity(const char *p, const char *end, char buf[4], size_t *n)
{
    const unsigned char *s = (const unsigned char *)p + 1;
    const unsigned char *e = (const unsigned char *)end;
    *n = 0;
    if (s < e && *s == '#') {
        s++;
        bool hex = s < e && (*s == 'x' || *s == 'X');
        if (hex)
            s++;
        const unsigned char *digits = s;
        unsigned long cp = 0;
        for (; s < e; s++) {
            int d = hex ? str_hex_digit(*s) : (is_digit(*s) ? *s - '0' : -1);
            if (d < 0)
                break;
            if (cp <= 0x10FFFF)
                cp = cp * (hex ? 16 : 10) + (unsigned long)d;
        }
        if (s == digits)
            return 0;
        if (s < e && *s == ';')
            s++;
        if (cp == 0)
            cp = 0xFFFD;
        else if (cp >= 0x80 && cp <= 0x9F)
            cp = cp1252_high[cp - 0x80] ? cp1252_high[cp - 0x80] : 0xFFFD;
        *n = utf8_put(buf, cp);
        return (size_t)(s - (const unsigned char *)p);
    }
    const unsigned char *name = s;
    while (s < e && s - name < 8 && (is_alpha(*s) || is_digit(*s)))
        s++;
    if (s == name || s >= e || *s != ';')
        return 0;
    size_t len = (size_t)(s - name);
    for (size_t i = 0; i < sizeof entities / sizeof *entities; i++) {
        if (strlen(entities[i].name) == len && memcmp(entities[i].name, name, len) == 0) {
            *n = entities[i].cp ? utf8_put(buf, entities[i].cp) : 0;
            return len + 2;
        }
    }
    return 0;
}

/* Appends the text of an attribute value with references decoded. */
static void decode_into(loom_str *out, const char *p, size_t len)
{
    const char *end = p + len;
    while (p < end) {
        if (*p == '&') {
            char buf[4];
            size_t n, used = decode_entity(p, end, buf, &n);
            if (used) {
                str_append(out, buf, n);
                p += used;
                continue;
            }
        }
        str_putc(out, *p++);
    }
}

/* ---- the writer ---- */

typedef struct writer {
    loom_str s;
    int nl_owed;         /* newlines to write before the next text (0-2) */
    bool space_owed;     /* a space to write before the next text */
    char prefix[64];     /* "## " or "  - ", written before the next text */
    int pre;             /* inside <pre>: whitespace is kept */
} writer;

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

static void owe_newlines(writer *w, int n)
{
    if (n > w->nl_owed)
        w->nl_owed = n;
}

/* Writes what is owed, just before real text. */
static void settle(writer *w)
{
    if (w->s.len == 0) {
        /* Nothing precedes the first text: no leading blank lines or
         * spaces, but a heading's "# " is still wanted. */
        w->nl_owed = 0;
        w->space_owed = false;
    }
    if (w->nl_owed > 0) {
        while (w->s.len && (w->s.ptr[w->s.len - 1] == ' ' || w->s.ptr[w->s.len - 1] == '\t'))
            w->s.len--;
        /* Trimming may leave nothing (a <pre> of blanks): then there is
         * no line to end. */
        int have = 0;
        while (have < (int)w->s.len && w->s.ptr[w->s.len - 1 - (size_t)have] == '\n')
            have++;
        for (int i = have; w->s.len && i < w->nl_owed; i++)
            str_putc(&w->s, '\n');
        if (w->s.ptr)
            w->s.ptr[w->s.len] = '\0';
    } else if (w->space_owed && w->s.len && w->s.ptr[w->s.len - 1] != ' ' &&
               w->s.ptr[w->s.len - 1] != '\n') {
        str_putc(&w->s, ' ');
    }
    if (w->prefix[0] && (w->s.len == 0 || w->s.ptr[w->s.len - 1] == '\n'))
        str_puts(&w->s, w->prefix);
    w->prefix[0] = '\0';
    w->nl_owed = 0;
    w->space_owed = false;
}

static void put_text(writer *w, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (w->pre) {
            if (c == '\n' || c == '\r') {
                if (c == '\r' && i + 1 < n && p[i + 1] == '\n')
                    i++;
                if (w->s.len)
                    str_putc(&w->s, '\n');
                continue;
            }
            settle(w);
            str_putc(&w->s, (char)c);
        } else if (is_space(c)) {
            w->space_owed = true;
        } else {
            settle(w);
            str_putc(&w->s, (char)c);
        }
    }
}

/* Text that must appear as written (" | ", "---", link targets), settled
 * like text but without whitespace collapsing. */
static void put_literal(writer *w, const char *lit)
{
    settle(w);
    str_puts(&w->s, lit);
}

/* ---- tags ---- */

typedef struct attr {
    const char *v;
    size_t n;
    bool present;
} attr;

typedef struct tag {
    char name[TAG_NAME_MAX + 1]; /* lowercased; "" when too long */
    bool end;                     /* </name> */
    bool self_closing;            /* <name/> */
    attr href, alt;
} tag;

static bool name_char(unsigned char c)
{
    return is_alpha(c) || is_digit(c) || c == '-' || c == ':' || c == '_';
}

/* Parses the tag at p ('<' followed by a letter, or "</"). Returns the
 * position after its '>', or NULL when the input ends first. */
static const char *parse_tag(const char *p, const char *end, tag *t)
{
    memset(t, 0, sizeof *t);
    p++;
    if (p < end && *p == '/') {
        t->end = true;
        p++;
    }
    size_t n = 0;
    bool too_long = false;
    while (p < end && name_char((unsigned char)*p)) {
        if (n < TAG_NAME_MAX)
            t->name[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
        else
            too_long = true;
        p++;
    }
    t->name[too_long ? 0 : n] = '\0';
    for (;;) {
        while (p < end && (is_space((unsigned char)*p) || *p == '/')) {
            if (*p == '/' && p + 1 < end && p[1] == '>')
                t->self_closing = true;
            p++;
        }
        if (p >= end)
            return NULL;
        if (*p == '>')
            return p + 1;
        const char *an = p;
        while (p < end && !is_space((unsigned char)*p) && *p != '=' && *p != '>' && *p != '/')
            p++;
        if (p == an) /* a stray '=': skip it */
            p++;
        size_t alen = (size_t)(p - an);
        while (p < end && is_space((unsigned char)*p))
            p++;
        attr val = {NULL, 0, true};
        if (p < end && *p == '=') {
            p++;
            while (p < end && is_space((unsigned char)*p))
                p++;
            if (p < end && (*p == '"' || *p == '\'')) {
                char q = *p++;
                const char *vs = p;
                const char *ve = memchr(p, q, (size_t)(end - p));
                if (!ve)
                    return NULL;
                val.v = vs;
                val.n = (size_t)(ve - vs);
                p = ve + 1;
            } else {
                const char *vs = p;
                while (p < end && !is_space((unsigned char)*p) && *p != '>')
                    p++;
                val.v = vs;
                val.n = (size_t)(p - vs);
            }
        }
        if (!t->end) {
            if (alen == 4 && strncasecmp(an, "href", 4) == 0 && !t->href.present)
                t->href = val;
            else if (alen == 3 && strncasecmp(an, "alt", 3) == 0 && !t->alt.present)
                t->alt = val;
        }
    }
}

static bool tag_in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0)
            return true;
    return false;
}

/* Elements whose whole content is dropped (they nest, so depth is counted). */
static const char *const skipped[] = {"head",   "noscript", "svg",   "template", "iframe",
                                      "canvas", "object",   "audio", "video",    "select",
                                      "math",   NULL};
/* Elements whose text is raw: no tags inside, only their own end tag. */
static const char *const raw_text[] = {"script", "style", "xmp", NULL};
/* What may stand in <head>; any other start tag closes it implicitly, as a
 * browser would, so a page that never writes </head> or <body> still shows. */
static const char *const head_content[] = {"meta",     "link",     "title", "style", "script",
                                           "base",     "noscript", "template", "object", NULL};
/* Boundaries worth a blank line, and worth a line break. */
static const char *const para_blocks[] = {
    "p",      "ul",     "ol",      "dl",      "table",   "blockquote", "section", "article",
    "header", "footer", "main",    "aside",   "nav",     "figure",     "form",    "fieldset",
    "details", "address", "h1",    "h2",      "h3",      "h4",         "h5",      "h6",
    NULL};
static const char *const line_blocks[] = {"div",    "li",      "dt",     "dd",     "tr",
                                          "caption", "figcaption", "summary", "option", "body",
                                          "html",   "center",  "legend", "menu",   "thead",
                                          "tbody",  "tfoot",   NULL};

typedef struct conv {
    writer w;
    char skip[TAG_NAME_MAX + 1]; /* the element being dropped, "" when none */
    int skip_depth;
    bool head_title;             /* inside <title> while dropping <head> */
    char lists[LIST_DEPTH];      /* 'u' or 'o' per open list */
    int list_counter[LIST_DEPTH];
    int list_depth;              /* may exceed LIST_DEPTH; the stack saturates */
    int cells;                   /* cells written in the current table row */
    bool in_link;
    loom_str href;               /* the open link's target */
    size_t link_start;           /* w.s.len when the link opened */
} conv;

static void link_close(conv *c)
{
    if (!c->in_link)
        return;
    c->in_link = false;
    writer *w = &c->w;
    if (c->href.len == 0 || w->s.len <= c->link_start)
        return;
    /* A link whose visible text already is its target ("https://x") is
     * not repeated. The text may start with what was owed before it (a
     * space, a list marker), so only its end is compared. */
    const char *text = w->s.ptr + c->link_start;
    size_t tn = w->s.len - c->link_start;
    if (tn >= c->href.len && memcmp(text + tn - c->href.len, c->href.ptr, c->href.len) == 0 &&
        (tn == c->href.len || is_space((unsigned char)text[tn - c->href.len - 1])))
        return;
    bool owed = w->space_owed;
    w->space_owed = false;
    str_puts(&w->s, " (");
    str_append(&w->s, c->href.ptr, c->href.len);
    str_putc(&w->s, ')');
    w->space_owed = owed;
}

static void link_open(conv *c, const attr *href)
{
    link_close(c);
    str_clear(&c->href);
    if (!href->present || href->n == 0 || href->n > HREF_MAX)
        return;
    decode_into(&c->href, href->v, href->n);
    /* Targets that mean nothing outside a browser are not worth showing. */
    const char *h = str_cstr(&c->href);
    while (*h == ' ')
        h++;
    if (*h == '#' || strncasecmp(h, "javascript:", 11) == 0 || strncasecmp(h, "data:", 5) == 0) {
        str_clear(&c->href);
        return;
    }
    for (size_t i = 0; i < c->href.len; i++)
        if (is_space((unsigned char)c->href.ptr[i]))
            c->href.ptr[i] = ' ';
    c->in_link = true;
    c->link_start = c->w.s.len;
}

static void list_item(conv *c)
{
    writer *w = &c->w;
    owe_newlines(w, 1);
    int d = c->list_depth < 1 ? 1 : (c->list_depth > LIST_DEPTH ? LIST_DEPTH : c->list_depth);
    size_t at = 0;
    for (int i = 1; i < d && at + 2 < sizeof w->prefix - 16; i++) {
        w->prefix[at++] = ' ';
        w->prefix[at++] = ' ';
    }
    if (c->list_depth >= 1 && c->lists[d - 1] == 'o') {
        int n = ++c->list_counter[d - 1];
        snprintf(w->prefix + at, sizeof w->prefix - at, "%d. ", n);
    } else {
        snprintf(w->prefix + at, sizeof w->prefix - at, "- ");
    }
}

static void start_tag(conv *c, const tag *t)
{
    writer *w = &c->w;
    const char *n = t->name;
    if (!*n)
        return;
    if (tag_in(n, skipped)) {
        if (!t->self_closing) {
            strcpy(c->skip, n);
            c->skip_depth = 1;
            c->head_title = false;
        }
        return;
    }
    if (n[0] == 'h' && n[1] >= '1' && n[1] <= '6' && !n[2]) {
        owe_newlines(w, 2);
        int level = n[1] - '0';
        memset(w->prefix, '#', (size_t)level);
        w->prefix[level] = ' ';
        w->prefix[level + 1] = '\0';
        return;
    }
    if (strcmp(n, "br") == 0) {
        /* Unlike block boundaries, line breaks add up: <br><br> is a blank line. */
        w->nl_owed = w->nl_owed < 2 ? w->nl_owed + 1 : 2;
        return;
    }
    if (strcmp(n, "hr") == 0) {
        owe_newlines(w, 2);
        put_literal(w, "---");
        owe_newlines(w, 2);
        return;
    }
    if (strcmp(n, "pre") == 0) {
        owe_newlines(w, 2);
        if (!t->self_closing)
            w->pre++;
        return;
    }
    if (strcmp(n, "ul") == 0 || strcmp(n, "ol") == 0 || strcmp(n, "menu") == 0) {
        owe_newlines(w, c->list_depth ? 1 : 2);
        if (c->list_depth < LIST_DEPTH) {
            c->lists[c->list_depth] = n[0] == 'o' ? 'o' : 'u';
            c->list_counter[c->list_depth] = 0;
        }
        if (c->list_depth < 1000000)
            c->list_depth++;
        return;
    }
    if (strcmp(n, "li") == 0) {
        list_item(c);
        return;
    }
    if (strcmp(n, "a") == 0) {
        link_open(c, &t->href);
        return;
    }
    if (strcmp(n, "img") == 0) {
        if (t->alt.present && t->alt.n) {
            loom_str alt = LOOM_STR_INIT;
            str_puts(&alt, "[image: ");
            decode_into(&alt, t->alt.v, t->alt.n);
            str_putc(&alt, ']');
            put_text(w, alt.ptr, alt.len);
            str_free(&alt);
        }
        return;
    }
    if (strcmp(n, "tr") == 0) {
        owe_newlines(w, 1);
        c->cells = 0;
        return;
    }
    if (strcmp(n, "td") == 0 || strcmp(n, "th") == 0) {
        if (c->cells++ > 0)
            put_literal(w, " | ");
        return;
    }
    if (tag_in(n, para_blocks))
        owe_newlines(w, 2);
    else if (tag_in(n, line_blocks))
        owe_newlines(w, 1);
}

static void end_tag(conv *c, const tag *t)
{
    writer *w = &c->w;
    const char *n = t->name;
    if (!*n)
        return;
    if (n[0] == 'h' && n[1] >= '1' && n[1] <= '6' && !n[2]) {
        w->prefix[0] = '\0';
        owe_newlines(w, 2);
        return;
    }
    if (strcmp(n, "a") == 0) {
        link_close(c);
        return;
    }
    if (strcmp(n, "pre") == 0) {
        if (w->pre)
            w->pre--;
        owe_newlines(w, 2);
        return;
    }
    if (strcmp(n, "ul") == 0 || strcmp(n, "ol") == 0 || strcmp(n, "menu") == 0) {
        if (c->list_depth > 0)
            c->list_depth--;
        owe_newlines(w, c->list_depth ? 1 : 2);
        return;
    }
    if (strcmp(n, "li") == 0) {
        w->prefix[0] = '\0';
        owe_newlines(w, 1);
        return;
    }
    if (tag_in(n, para_blocks))
        owe_newlines(w, 2);
    else if (tag_in(n, line_blocks))
        owe_newlines(w, 1);
}

/* A tag seen while an element is being dropped: only its nesting matters,
 * and the implicit end of <head>. Returns true when the tag should also be
 * handled normally (it ended the drop). */
static bool skipping_tag(conv *c, const tag *t)
{
    if (strcmp(c->skip, "head") == 0) {
        if (!t->end && strcmp(t->name, "title") == 0) {
            c->head_title = true;
            return false;
        }
        if (t->end && strcmp(t->name, "title") == 0) {
            c->head_title = false;
            return false;
        }
        if (!t->end && t->name[0] && !tag_in(t->name, head_content)) { /* <body> included */
            c->skip_depth = 0;
            c->skip[0] = '\0';
            return true;
        }
    }
    if (strcmp(t->name, c->skip) == 0) {
        if (t->end)
            c->skip_depth--;
        else if (!t->self_closing)
            c->skip_depth++;
        if (c->skip_depth == 0)
            c->skip[0] = '\0';
    }
    return false;
}

/* Finds "</name" (any case) followed by a delimiter, from p; returns its
 * start or end when absent. */
static const char *find_end_tag(const char *p, const char *end, const char *name)
{
    size_t n = strlen(name);
    for (; p + 2 + n <= end; p++) {
        p = memchr(p, '<', (size_t)(end - p));
        if (!p || p + 2 + n > end)
            break;
        if (p[1] == '/' && strncasecmp(p + 2, name, n) == 0 &&
            (p + 2 + n == end || !name_char((unsigned char)p[2 + n])))
            return p;
    }
    return end;
}

char *html_to_text(const char *html, size_t len, size_t *out_len)
{
    conv c;
    memset(&c, 0, sizeof c);
    const char *p = html ? html : "";
    const char *end = p + (html ? len : 0);

    while (p < end) {
        unsigned char ch = (unsigned char)*p;
        if (ch == '<') {
            const char *q = p + 1;
            if (q < end && *q == '!') {
                const char *stop;
                if (end - q >= 3 && q[1] == '-' && q[2] == '-') {
                    stop = NULL;
                    for (const char *s = q + 3; s + 3 <= end; s++) {
                        s = memchr(s, '-', (size_t)(end - s));
                        if (!s || s + 3 > end)
                            break;
                        if (s[1] == '-' && s[2] == '>') {
                            stop = s + 3;
                            break;
                        }
                    }
                } else {
                    stop = memchr(q, '>', (size_t)(end - q));
                    if (stop)
                        stop++;
                }
                p = stop ? stop : end;
                continue;
            }
            if (q < end && *q == '?') {
                const char *stop = memchr(q, '>', (size_t)(end - q));
                p = stop ? stop + 1 : end;
                continue;
            }
            bool is_tag = q < end && (is_alpha((unsigned char)*q) ||
                                      (*q == '/' && q + 1 < end && is_alpha((unsigned char)q[1])));
            if (is_tag) {
                tag t;
                const char *after = parse_tag(p, end, &t);
                if (!after)
                    break; /* a tag cut off by the end of input shows nothing */
                p = after;
                bool handle = !c.skip_depth || skipping_tag(&c, &t);
                if (handle) {
                    if (t.end)
                        end_tag(&c, &t);
                    else
                        start_tag(&c, &t);
                }
                if (!t.end && tag_in(t.name, raw_text)) {
                    const char *close = find_end_tag(p, end, t.name);
                    p = close;
                }
                continue;
            }
            /* A '<' that starts no tag is text ("a < b"). */
        }
        if (c.skip_depth) {
            /* Text in <head> outside <title> means the head is over. */
            if (strcmp(c.skip, "head") == 0 && !c.head_title && !is_space(ch) && ch != '&') {
                c.skip_depth = 0;
                c.skip[0] = '\0';
            } else {
                p++;
                continue;
            }
        }
        if (ch == '&') {
            char buf[4];
            size_t n, used = decode_entity(p, end, buf, &n);
            if (used) {
                put_text(&c.w, buf, n);
                p += used;
                continue;
            }
        }
        const char *run = p;
        while (p < end && *p != '<' && *p != '&')
            p++;
        if (p == run)
            p++;
        put_text(&c.w, run, (size_t)(p - run));
    }
    link_close(&c);
    str_free(&c.href);

    /* Trailing blanks and newlines go; the clean-up pass makes it UTF-8. */
    loom_str *s = &c.w.s;
    while (s->len && is_space((unsigned char)s->ptr[s->len - 1]))
        s->len--;
    char *text = text_to_utf8(s->ptr ? s->ptr : "", s->len, 0, out_len);
    str_free(s);
    return text;
}
