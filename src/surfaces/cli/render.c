/* render.c — markdown to terminal text: md4c parses, the callbacks below
 * lay the blocks out line by line, and a small stream layer on top decides
 * when enough of the model's text has arrived to render a piece of it.
 *
 * Styles are kept as depth counters and re-emitted whole (reset, then every
 * active attribute) on each change: SGR "off" codes overlap (22 ends both
 * bold and dim), so toggling single attributes would lose nested ones. No
 * style is left on across a newline, so the spinner and the prompt never
 * inherit one. A fenced code block shows its language above it and, for
 * the languages highlight.h knows, is highlighted instead of dimmed; each
 * rendered piece but a table is word-wrapped to the width (wrap.h). */
#include "surfaces/cli/render.h"

#include <md4c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/termsafe.h"
#include "surfaces/cli/highlight.h"
#include "surfaces/cli/wrap.h"

#define MAX_DEPTH 32
#define MD_FLAGS (MD_FLAG_NOINDENTEDCODEBLOCKS | MD_FLAG_TABLES | MD_FLAG_STRIKETHROUGH | \
                  MD_FLAG_TASKLISTS | MD_FLAG_PERMISSIVEURLAUTOLINKS | \
                  MD_FLAG_PERMISSIVEWWWAUTOLINKS)

/* ---- display width ------------------------------------------------------- */

size_t render_display_width(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x1b && i + 1 < n && s[i + 1] == '[') {
            i += 2;
            while (i < n && !((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')))
                i++;
            continue;
        }
        if ((c & 0xC0) != 0x80)
            w++;
    }
    return w;
}

/* ---- the md4c renderer ------------------------------------------------------ */

enum { C_QUOTE, C_UL, C_OL, C_LI };

typedef struct container {
    int kind;
    unsigned next;      /* C_OL: the number of the next item */
    char marker[24];    /* C_LI: "• " or "3. ", printed on the item's first line */
    int width;          /* C_LI: columns the item's later lines are indented */
    bool marker_done;
} container;

typedef struct table_cell {
    loom_str text;
    MD_ALIGN align;
} table_cell;

typedef struct table {
    table_cell **rows;  /* rows[r][c] */
    size_t *n_cells;
    size_t n_rows, head_rows;
    bool in_head;
} table;

typedef struct rctx {
    bool color;
    int width;
    loom_str *out;
    loom_str *dst;          /* out, or the table cell being filled */
    bool in_cell;
    int base_indent;        /* columns the source line was indented */
    container stack[MAX_DEPTH];
    int depth;
    bool line_start;
    bool styled;            /* an attribute is on in the output */
    int strong, em, code_span, del, under, link, dim, h1, heading, code_block;
    loom_str link_url, link_text;
    table tbl;
    bool in_table;
    const hl_lang *lang;    /* the code block's language, when highlighted */
    hl_state hl;
    hl_class hl_cls;        /* the class of the code being put */
} rctx;

static void raw(rctx *c, const char *s)
{
    str_puts(c->dst, s);
}

/* Re-emits the whole style; see the file comment. */
static void apply_style(rctx *c)
{
    if (!c->color || (c->line_start && !c->in_cell))
        return;
    char codes[64] = "";
    size_t n = 0;
#define ADD(code) n += (size_t)snprintf(codes + n, sizeof codes - n, "%s" code, n ? ";" : "")
    if (c->strong || c->heading)
        ADD("1");
    if (c->dim || (c->code_block && !c->lang))
        ADD("2");
    if (c->em)
        ADD("3");
    if (c->under || c->link || c->h1)
        ADD("4");
    if (c->del)
        ADD("9");
    if (c->code_span)
        ADD("36");
    else if (c->link)
        ADD("34");
    if (c->hl_cls != HL_PLAIN)
        n += (size_t)snprintf(codes + n, sizeof codes - n, "%s%s", n ? ";" : "",
                              highlight_sgr(c->hl_cls));
#undef ADD
    if (!n && !c->styled)
        return;
    if (c->styled)
        raw(c, "\x1b[0m");
    if (n) {
        str_printf(c->dst, "\x1b[%sm", codes);
        c->styled = true;
    } else {
        c->styled = false;
    }
}

static void reset_style(rctx *c)
{
    if (c->styled) {
        raw(c, "\x1b[0m");
        c->styled = false;
    }
}

static void spaces(loom_str *s, int n)
{
    for (int i = 0; i < n; i++)
        str_putc(s, ' ');
}

/* The start of an output line: indentation, quote bars, a list marker. */
static void begin_line(rctx *c)
{
    c->line_start = false;
    reset_style(c);
    spaces(c->dst, c->base_indent);
    for (int i = 0; i < c->depth; i++) {
        container *k = &c->stack[i];
        if (k->kind == C_QUOTE) {
            raw(c, c->color ? "\x1b[2m\xe2\x94\x82\x1b[0m " : "\xe2\x94\x82 ");
        } else if (k->kind == C_LI) {
            if (!k->marker_done) {
                raw(c, k->marker);
                k->marker_done = true;
            } else {
                spaces(c->dst, k->width);
            }
        }
    }
    if (c->code_block)
        spaces(c->dst, 4);
    apply_style(c);
}

static void put(rctx *c, const char *s, size_t n)
{
    if (!n)
        return;
    if (c->line_start && !c->in_cell)
        begin_line(c);
    /* Every byte of the model's text passes here (entities and URLs
     * included, `&#27;` decodes to ESC): only raw() writes escapes. */
    termsafe_append(c->dst, s, n);
    if (c->link)
        str_append(&c->link_text, s, n);
}

static void newline(rctx *c)
{
    if (c->in_cell) {
        put(c, " ", 1);
        return;
    }
    reset_style(c);
    str_putc(c->dst, '\n');
    c->line_start = true;
}

static void end_line(rctx *c)
{
    if (!c->line_start)
        newline(c);
}

/* Entities md4c hands over undecoded: the common named ones and numbers. */
static void put_entity(rctx *c, const char *s, size_t n)
{
    static const struct {
        const char *name, *utf8;
    } named[] = {
        {"&amp;", "&"},     {"&lt;", "<"},       {"&gt;", ">"},        {"&quot;", "\""},
        {"&apos;", "'"},    {"&nbsp;", " "},     {"&copy;", "\xc2\xa9"}, {"&reg;", "\xc2\xae"},
        {"&mdash;", "\xe2\x80\x94"}, {"&ndash;", "\xe2\x80\x93"}, {"&hellip;", "\xe2\x80\xa6"},
        {"&rarr;", "\xe2\x86\x92"},  {"&larr;", "\xe2\x86\x90"},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (strlen(named[i].name) == n && !memcmp(named[i].name, s, n)) {
            put(c, named[i].utf8, strlen(named[i].utf8));
            return;
        }
    if (n > 3 && s[1] == '#') {
        char num[16];
        size_t len = n - 3 < sizeof num - 1 ? n - 3 : sizeof num - 1;
        memcpy(num, s + 2, len);
        num[len] = '\0';
        unsigned long cp = (num[0] == 'x' || num[0] == 'X') ? strtoul(num + 1, NULL, 16)
                                                          : strtoul(num, NULL, 10);
        char u[4];
        size_t k = 0;
        if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            cp = 0xFFFD;
        if (cp < 0x80) {
            u[k++] = (char)cp;
        } else if (cp < 0x800) {
            u[k++] = (char)(0xC0 | (cp >> 6));
            u[k++] = (char)(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            u[k++] = (char)(0xE0 | (cp >> 12));
            u[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            u[k++] = (char)(0x80 | (cp & 0x3F));
        } else {
            u[k++] = (char)(0xF0 | (cp >> 18));
            u[k++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            u[k++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            u[k++] = (char)(0x80 | (cp & 0x3F));
        }
        put(c, u, k);
        return;
    }
    put(c, s, n);
}

static void push(rctx *c, int kind)
{
    if (c->depth < MAX_DEPTH) {
        memset(&c->stack[c->depth], 0, sizeof c->stack[0]);
        c->stack[c->depth].kind = kind;
    }
    c->depth++;
}

static container *top(rctx *c)
{
    return c->depth > 0 && c->depth <= MAX_DEPTH ? &c->stack[c->depth - 1] : NULL;
}

static int list_level(const rctx *c)
{
    int level = c->base_indent / 2;
    for (int i = 0; i < c->depth && i < MAX_DEPTH; i++)
        level += c->stack[i].kind == C_UL || c->stack[i].kind == C_OL;
    return level;
}

static void enter_item(rctx *c, const MD_BLOCK_LI_DETAIL *d)
{
    static const char *const bullets[] = {"\xe2\x80\xa2", "\xe2\x97\xa6", "\xe2\x96\xaa"};
    container *list = top(c);
    int level = list_level(c);
    push(c, C_LI);
    container *li = top(c);
    if (!li)
        return;
    if (list && list->kind == C_OL)
        snprintf(li->marker, sizeof li->marker, "%u. ", list->next++);
    else
        snprintf(li->marker, sizeof li->marker, "%s ", bullets[(level > 0 ? level - 1 : 0) % 3]);
    if (d && d->is_task) {
        size_t len = strlen(li->marker);
        snprintf(li->marker + len, sizeof li->marker - len, "[%c] ",
                 d->task_mark == ' ' ? ' ' : 'x');
    }
    li->width = (int)render_display_width(li->marker, strlen(li->marker));
}

static void table_free(table *t)
{
    for (size_t r = 0; r < t->n_rows; r++) {
        for (size_t k = 0; k < t->n_cells[r]; k++)
            str_free(&t->rows[r][k].text);
        free(t->rows[r]);
    }
    free(t->rows);
    free(t->n_cells);
    memset(t, 0, sizeof *t);
}

static void pad_cell(rctx *c, const table_cell *cell, size_t width)
{
    const char *s = str_cstr(&cell->text);
    size_t w = render_display_width(s, cell->text.len);
    size_t gap = width > w ? width - w : 0;
    size_t before = cell->align == MD_ALIGN_RIGHT ? gap : cell->align == MD_ALIGN_CENTER ? gap / 2 : 0;
    spaces(c->dst, (int)before);
    str_append(c->dst, s, cell->text.len);
    spaces(c->dst, (int)(gap - before));
}

/* Columns padded to their widest cell, a rule under the header. */
static void emit_table(rctx *c)
{
    table *t = &c->tbl;
    size_t cols = 0;
    for (size_t r = 0; r < t->n_rows; r++)
        if (t->n_cells[r] > cols)
            cols = t->n_cells[r];
    size_t *w = xcalloc(cols ? cols : 1, sizeof *w);
    for (size_t r = 0; r < t->n_rows; r++)
        for (size_t k = 0; k < t->n_cells[r]; k++) {
            size_t cw = render_display_width(str_cstr(&t->rows[r][k].text), t->rows[r][k].text.len);
            if (cw > w[k])
                w[k] = cw;
        }
    const char *bar = c->color ? " \x1b[2m\xe2\x94\x82\x1b[0m " : " \xe2\x94\x82 ";
    table_cell empty = {LOOM_STR_INIT, MD_ALIGN_DEFAULT};
    for (size_t r = 0; r < t->n_rows; r++) {
        begin_line(c);
        for (size_t k = 0; k < cols; k++) {
            if (k)
                raw(c, bar);
            bool head = r < t->head_rows;
            if (head && c->color)
                raw(c, "\x1b[1m");
            pad_cell(c, k < t->n_cells[r] ? &t->rows[r][k] : &empty, w[k]);
            if (head && c->color)
                raw(c, "\x1b[0m");
        }
        newline(c);
        if (r + 1 == t->head_rows) {
            begin_line(c);
            if (c->color)
                raw(c, "\x1b[2m");
            for (size_t k = 0; k < cols; k++) {
                if (k)
                    raw(c, "\xe2\x94\x80\xe2\x94\xbc\xe2\x94\x80");
                for (size_t i = 0; i < w[k]; i++)
                    raw(c, "\xe2\x94\x80");
            }
            if (c->color)
                raw(c, "\x1b[0m");
            newline(c);
        }
    }
    free(w);
}

static int on_enter_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
    rctx *c = ud;
    table *t = &c->tbl;
    switch (type) {
    case MD_BLOCK_DOC:
        break;
    case MD_BLOCK_QUOTE:
        end_line(c);
        push(c, C_QUOTE);
        break;
    case MD_BLOCK_UL:
        end_line(c);
        push(c, C_UL);
        break;
    case MD_BLOCK_OL:
        end_line(c);
        push(c, C_OL);
        if (top(c))
            top(c)->next = ((MD_BLOCK_OL_DETAIL *)detail)->start;
        break;
    case MD_BLOCK_LI:
        end_line(c);
        enter_item(c, detail);
        break;
    case MD_BLOCK_HR: {
        end_line(c);
        begin_line(c);
        int n = (c->width > 80 ? 80 : c->width) - c->base_indent;
        if (c->color)
            raw(c, "\x1b[2m");
        for (int i = 0; i < (n > 3 ? n : 3); i++)
            raw(c, "\xe2\x94\x80");
        if (c->color)
            raw(c, "\x1b[0m");
        newline(c);
        break;
    }
    case MD_BLOCK_H:
        end_line(c);
        c->heading++;
        c->h1 += ((MD_BLOCK_H_DETAIL *)detail)->level == 1;
        break;
    case MD_BLOCK_CODE: {
        end_line(c);
        const MD_BLOCK_CODE_DETAIL *d = detail;
        c->lang = d ? highlight_lang(d->lang.text, d->lang.size) : NULL;
        memset(&c->hl, 0, sizeof c->hl);
        if (d && d->lang.size) {
            /* The language, above the block: "┌ python". */
            begin_line(c);
            c->dim++;
            apply_style(c);
            put(c, "  \xe2\x94\x8c ", 6);
            put(c, d->lang.text, d->lang.size);
            c->dim--;
            newline(c);
        }
        c->code_block++;
        break;
    }
    case MD_BLOCK_HTML:
    case MD_BLOCK_P:
        end_line(c);
        break;
    case MD_BLOCK_TABLE:
        end_line(c);
        table_free(t);
        c->in_table = true;
        break;
    case MD_BLOCK_THEAD:
        t->in_head = true;
        break;
    case MD_BLOCK_TBODY:
        t->in_head = false;
        break;
    case MD_BLOCK_TR:
        t->rows = xrealloc(t->rows, (t->n_rows + 1) * sizeof *t->rows);
        t->n_cells = xrealloc(t->n_cells, (t->n_rows + 1) * sizeof *t->n_cells);
        t->rows[t->n_rows] = NULL;
        t->n_cells[t->n_rows] = 0;
        t->n_rows++;
        if (t->in_head)
            t->head_rows = t->n_rows;
        break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD: {
        if (!t->n_rows)
            break;
        size_t r = t->n_rows - 1;
        t->rows[r] = xrealloc(t->rows[r], (t->n_cells[r] + 1) * sizeof *t->rows[r]);
        table_cell *cell = &t->rows[r][t->n_cells[r]++];
        memset(cell, 0, sizeof *cell);
        cell->align = ((MD_BLOCK_TD_DETAIL *)detail)->align;
        str_puts(&cell->text, "");
        c->dst = &cell->text;
        c->in_cell = true;
        apply_style(c);
        break;
    }
    }
    return 0;
}

static int on_leave_block(MD_BLOCKTYPE type, void *detail, void *ud)
{
    (void)detail;
    rctx *c = ud;
    switch (type) {
    case MD_BLOCK_LI: {
        container *li = top(c);
        if (li && li->kind == C_LI && !li->marker_done) {
            begin_line(c); /* an empty item still shows its bullet */
            newline(c);
        }
        end_line(c);
        c->depth--;
        break;
    }
    case MD_BLOCK_QUOTE:
    case MD_BLOCK_UL:
    case MD_BLOCK_OL:
        end_line(c);
        c->depth--;
        break;
    case MD_BLOCK_H:
        c->heading--;
        c->h1 -= ((MD_BLOCK_H_DETAIL *)detail)->level == 1;
        end_line(c);
        break;
    case MD_BLOCK_CODE:
        end_line(c);
        c->code_block--;
        c->lang = NULL;
        break;
    case MD_BLOCK_P:
    case MD_BLOCK_HTML:
        end_line(c);
        break;
    case MD_BLOCK_TH:
    case MD_BLOCK_TD:
        if (c->in_cell) {
            reset_style(c);
            c->dst = c->out;
            c->in_cell = false;
        }
        break;
    case MD_BLOCK_TABLE:
        emit_table(c);
        table_free(&c->tbl);
        c->in_table = false;
        break;
    default:
        break;
    }
    return 0;
}

static void attr_to(loom_str *s, const MD_ATTRIBUTE *a)
{
    str_clear(s);
    str_puts(s, "");
    if (a && a->text)
        str_append(s, a->text, a->size);
}

static int on_enter_span(MD_SPANTYPE type, void *detail, void *ud)
{
    rctx *c = ud;
    switch (type) {
    case MD_SPAN_EM: c->em++; break;
    case MD_SPAN_STRONG: c->strong++; break;
    case MD_SPAN_CODE: c->code_span++; break;
    case MD_SPAN_DEL: c->del++; break;
    case MD_SPAN_U: c->under++; break;
    case MD_SPAN_A:
        attr_to(&c->link_url, &((MD_SPAN_A_DETAIL *)detail)->href);
        str_clear(&c->link_text);
        c->link++;
        break;
    case MD_SPAN_IMG:
        attr_to(&c->link_url, &((MD_SPAN_IMG_DETAIL *)detail)->src);
        put(c, "[image: ", 8);
        break;
    default: break;
    }
    apply_style(c);
    return 0;
}

/* " (url)" after a link, unless the text already is the url. */
static void put_url(rctx *c, bool always)
{
    const char *url = str_cstr(&c->link_url);
    const char *text = str_cstr(&c->link_text);
    if (!*url)
        return;
    if (!always && (!strcmp(url, text) || (!strncmp(url, "mailto:", 7) && !strcmp(url + 7, text)) ||
                    (!strncmp(url, "http://", 7) && !strcmp(url + 7, text))))
        return;
    c->dim++;
    apply_style(c);
    put(c, " (", 2);
    put(c, url, strlen(url));
    put(c, ")", 1);
    c->dim--;
    apply_style(c);
}

static int on_leave_span(MD_SPANTYPE type, void *detail, void *ud)
{
    (void)detail;
    rctx *c = ud;
    switch (type) {
    case MD_SPAN_EM: c->em--; break;
    case MD_SPAN_STRONG: c->strong--; break;
    case MD_SPAN_CODE: c->code_span--; break;
    case MD_SPAN_DEL: c->del--; break;
    case MD_SPAN_U: c->under--; break;
    case MD_SPAN_A:
        c->link--;
        apply_style(c);
        put_url(c, false);
        return 0;
    case MD_SPAN_IMG:
        put(c, "]", 1);
        put_url(c, true);
        break;
    default: break;
    }
    apply_style(c);
    return 0;
}

static void put_highlighted(void *ud, hl_class cls, const char *s, size_t n)
{
    rctx *c = ud;
    if (c->line_start && !c->in_cell)
        begin_line(c);
    c->hl_cls = cls;
    apply_style(c);
    put(c, s, n);
    c->hl_cls = HL_PLAIN;
    apply_style(c);
}

/* One line of a code block: highlighted when its language is known. */
static void put_code(rctx *c, const char *s, size_t n)
{
    if (!c->lang || !c->color || !n) {
        put(c, s, n);
        return;
    }
    highlight_line(c->lang, &c->hl, s, n, put_highlighted, c);
}

static int on_text(MD_TEXTTYPE type, const MD_CHAR *text, MD_SIZE size, void *ud)
{
    rctx *c = ud;
    switch (type) {
    case MD_TEXT_NULLCHAR:
        put(c, "\xef\xbf\xbd", 3);
        break;
    case MD_TEXT_BR:
    case MD_TEXT_SOFTBR:
        newline(c);
        break;
    case MD_TEXT_ENTITY:
        put_entity(c, text, size);
        break;
    case MD_TEXT_CODE:
        if (c->code_block) {
            /* Verbatim lines: each gets the block's indentation. */
            size_t start = 0;
            for (size_t i = 0; i < size; i++)
                if (text[i] == '\n') {
                    put_code(c, text + start, i - start);
                    newline(c);
                    start = i + 1;
                }
            put_code(c, text + start, size - start);
            break;
        }
        put(c, text, size);
        break;
    default:
        put(c, text, size);
        break;
    }
    return 0;
}

/* Renders one self-contained piece (a line, a fenced block, a table). */
static void render_piece(const char *md, size_t n, int base_indent, bool color, int width,
                         loom_str *out)
{
    rctx c = {.color = color, .width = width > 0 ? width : 80, .out = out, .dst = out,
              .base_indent = base_indent, .line_start = true};
    str_puts(out, "");
    size_t mark = out->len;
    MD_PARSER parser = {
        .abi_version = 0,
        .flags = MD_FLAGS,
        .enter_block = on_enter_block,
        .leave_block = on_leave_block,
        .enter_span = on_enter_span,
        .leave_span = on_leave_span,
        .text = on_text,
    };
    if (md_parse(md, (MD_SIZE)n, &parser, &c) != 0) {
        /* Only out of memory gets here: show the text as it came. */
        out->len = mark;
        out->ptr[mark] = '\0';
        spaces(out, base_indent);
        termsafe_append(out, md, n);
        c.line_start = n == 0 || md[n - 1] == '\n';
    }
    c.dst = out;
    c.in_cell = false;
    end_line(&c);
    table_free(&c.tbl);
    str_free(&c.link_url);
    str_free(&c.link_text);
}

/* ---- the stream ---------------------------------------------------------- */

struct render_stream {
    bool color;
    int width;
    loom_str pending;   /* held back: the current line, or an open block */
    size_t scan;        /* pending[0..scan) is an open block's lines */
    bool in_fence, in_table;
    char fence_ch;
    size_t fence_len;
    int block_indent;   /* the open block's first line indentation */
    bool wrote, last_blank;
};

render_stream *render_stream_new(bool color, int width)
{
    render_stream *rs = xcalloc(1, sizeof *rs);
    rs->color = color;
    rs->width = width > 0 ? width : 80;
    return rs;
}

void render_stream_free(render_stream *rs)
{
    if (!rs)
        return;
    str_free(&rs->pending);
    free(rs);
}

/* Leading whitespace in columns (a tab to the next multiple of 4); *skip
 * gets its length in bytes. */
static int indent_of(const char *s, size_t n, size_t *skip)
{
    int cols = 0;
    size_t i = 0;
    for (; i < n && (s[i] == ' ' || s[i] == '\t'); i++)
        cols = s[i] == '\t' ? (cols / 4 + 1) * 4 : cols + 1;
    if (skip)
        *skip = i;
    return cols;
}

static bool is_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return false;
    return true;
}

/* A fence line: ``` or ~~~ (three or more); *len gets the run's length. */
static bool fence_of(const char *s, size_t n, char *ch, size_t *len)
{
    size_t i;
    indent_of(s, n, &i);
    if (i >= n || (s[i] != '`' && s[i] != '~'))
        return false;
    size_t k = i;
    while (k < n && s[k] == s[i])
        k++;
    if (k - i < 3)
        return false;
    if (s[i] == '`' && memchr(s + k, '`', n - k))
        return false; /* CommonMark: a backtick fence's info has no backticks */
    *ch = s[i];
    *len = k - i;
    return true;
}

static bool closes_fence(const render_stream *rs, const char *s, size_t n)
{
    char ch;
    size_t len;
    if (!fence_of(s, n, &ch, &len) || ch != rs->fence_ch || len < rs->fence_len)
        return false;
    size_t i;
    indent_of(s, n, &i);
    return is_blank(s + i + len, n - i - len);
}

static bool is_table_line(const char *s, size_t n)
{
    size_t i;
    indent_of(s, n, &i);
    return i < n && s[i] == '|';
}

/* Renders lines [0, len) of pending, each with up to `strip` columns of
 * indentation removed (shown again as the piece's own indent). */
static void render_lines(render_stream *rs, size_t len, int strip, loom_str *out)
{
    loom_str text = LOOM_STR_INIT;
    const char *p = rs->pending.ptr;
    size_t i = 0;
    while (i < len) {
        const char *nl = memchr(p + i, '\n', len - i);
        size_t end = nl ? (size_t)(nl - p) + 1 : len;
        size_t k = i;
        int cols = 0;
        while (k < end && cols < strip && (p[k] == ' ' || p[k] == '\t')) {
            cols = p[k] == '\t' ? (cols / 4 + 1) * 4 : cols + 1;
            k++;
        }
        /* md4c would read a lone CR as a line break; shown as "^M" it
         * cannot hide the start of a line (a CR LF is a newline). */
        for (size_t j = k; j < end; j++) {
            if (p[j] == '\r' && !(j + 1 < end && p[j + 1] == '\n'))
                str_puts(&text, "^M");
            else if (p[j] != '\r')
                str_putc(&text, p[j]);
        }
        i = end;
    }
    if (rs->in_table) {
        render_piece(str_cstr(&text), text.len, strip, rs->color, rs->width, out);
    } else {
        /* A table is laid out to its columns; everything else is wrapped. */
        loom_str piece = LOOM_STR_INIT;
        render_piece(str_cstr(&text), text.len, strip, rs->color, rs->width, &piece);
        wrap_text(piece.ptr ? piece.ptr : "", piece.len, rs->width, out);
        str_free(&piece);
    }
    str_free(&text);
    rs->wrote = true;
    rs->last_blank = false;
}

static void consume(render_stream *rs, size_t n)
{
    str_consume(&rs->pending, n);
    rs->scan = 0;
}

static void close_table(render_stream *rs, loom_str *out)
{
    render_lines(rs, rs->scan, rs->block_indent, out);
    consume(rs, rs->scan);
    rs->in_table = false;
}

void render_stream_feed(render_stream *rs, const char *text, size_t n, loom_str *out)
{
    str_append(&rs->pending, text, n);
    for (;;) {
        const char *line = rs->pending.ptr + rs->scan;
        size_t avail = rs->pending.len - rs->scan;
        const char *nl = avail ? memchr(line, '\n', avail) : NULL;
        if (!nl)
            return;
        size_t llen = (size_t)(nl - line) + 1;
        if (rs->in_fence) {
            rs->scan += llen;
            if (closes_fence(rs, line, llen)) {
                render_lines(rs, rs->scan, rs->block_indent, out);
                consume(rs, rs->scan);
                rs->in_fence = false;
            }
            continue;
        }
        if (rs->in_table) {
            if (is_table_line(line, llen)) {
                rs->scan += llen;
                continue;
            }
            close_table(rs, out);
            continue; /* the line after the table, on its own */
        }
        int indent = indent_of(line, llen, NULL);
        if (fence_of(line, llen, &rs->fence_ch, &rs->fence_len)) {
            rs->in_fence = true;
            rs->block_indent = indent;
            rs->scan += llen;
        } else if (is_table_line(line, llen)) {
            rs->in_table = true;
            rs->block_indent = indent;
            rs->scan += llen;
        } else if (is_blank(line, llen)) {
            if (rs->wrote && !rs->last_blank) {
                str_putc(out, '\n');
                rs->last_blank = true;
            }
            consume(rs, llen);
        } else {
            render_lines(rs, llen, indent, out);
            consume(rs, llen);
        }
    }
}

void render_stream_finish(render_stream *rs, loom_str *out)
{
    if (rs->in_table)
        close_table(rs, out);
    if (rs->pending.len && !is_blank(rs->pending.ptr, rs->pending.len)) {
        int indent = rs->in_fence ? rs->block_indent : indent_of(rs->pending.ptr, rs->pending.len, NULL);
        render_lines(rs, rs->pending.len, indent, out);
    }
    render_stream_discard(rs);
    rs->wrote = false;
    rs->last_blank = false;
}

void render_stream_discard(render_stream *rs)
{
    str_clear(&rs->pending);
    rs->scan = 0;
    rs->in_fence = false;
    rs->in_table = false;
}

bool render_stream_pending(const render_stream *rs)
{
    return rs->pending.len > 0;
}

void render_markdown(const char *md, size_t n, bool color, int width, loom_str *out)
{
    render_stream *rs = render_stream_new(color, width);
    render_stream_feed(rs, md, n, out);
    render_stream_finish(rs, out);
    render_stream_free(rs);
}
