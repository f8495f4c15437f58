/* expand.c — a custom command turned into the prompt that is sent
 * (command_expand, commands.h), in the order docs/commands.md gives:
 *
 *   1. the command's allowed-tools are granted for the run
 *      (governance_grant_run, "command /NAME"), so its own !`cmd` lines
 *      and the model's later calls count them; deny and ask rules still
 *      win over a grant;
 *   2. $ARGUMENTS, $1 … $9 (substitute.c);
 *   3. every !`cmd` (not glued to a word: "x!`y`" is text) runs as a
 *      Bash call through the governed pipeline — rules, hooks, sandbox,
 *      approvals — and its output (cut to COMMAND_OUTPUT_CAP) replaces it;
 *      a denied or failed call leaves the result's text, so the person and
 *      the model see why;
 *   4. every word @path (at the start of a line or after a blank) that
 *      names an existing file is read through the pipeline as a Read call
 *      and the file's text (cut to COMMAND_FILE_CAP) follows its line in a
 *      fenced block; a denied read leaves the denial. "a@b.c", "@" inside
 *      a word and words naming no file stay text. Command output is never
 *      scanned for @words: a file's or a command's text does not get to
 *      pull in more files.
 *
 * The arguments are substituted before the commands run, as in Claude
 * Code: `!`git log $1`` runs what the person typed, as one Bash call the
 * rules judge whole (a "; rm -rf ~" in it is a compound the rule engine
 * sees, and no Bash(git log:*) grant covers it).
 *
 * Runs on the run's thread; the calls are made one at a time, in order. */
#include "ext/commands/commands_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/event.h"
#include "base/path.h"
#include "governance/governance.h"
#include "governance/pipeline.h"

/* How many @files one expansion includes; the rest are named. */
#define COMMAND_MAX_INCLUDES 20

typedef struct expander {
    const command_def *c;      /* NULL for a plain prompt's mentions */
    const tool_registry *reg;
    tool_ctx *ctx;
    unsigned calls;            /* for the calls' ids */
    /* A plain prompt (command_expand_mentions): @dir/ lists the folder,
     * and images read are put here ({mediaType, data}) instead of text. */
    json_t *images;
} expander;

/* One call through the pipeline, reported as tool.started / finished like
 * the model's. The outcome is the caller's to free. */
static void run_call(expander *x, const char *tool, json_t *input, tool_outcome *out)
{
    char id[64];
    snprintf(id, sizeof id, "command_%u_%s", ++x->calls, tool);
    tool_call call = {.id = id, .name = tool, .input = input};
    tool_ctx *ctx = x->ctx;
    if (ctx->emit)
        ctx->emit(ctx->emit_ctx, LOOM_EV_TOOL_STARTED, event_tool_started(id, tool, input));
    tool_call_run(x->reg, &call, ctx, out);
    const tool_result *r = &out->result;
    if (ctx->emit)
        ctx->emit(ctx->emit_ctx, r->is_error ? LOOM_EV_TOOL_FAILED : LOOM_EV_TOOL_FINISHED,
                  event_tool_finished(id, tool, r->is_error, out->started_us, out->finished_us,
                                      str_cstr(&r->text), r->text.len, out->failed_step, r->raw));
}

static bool cancelled(const expander *x)
{
    return x->ctx->cancel && cancel_requested(x->ctx->cancel);
}

/* ---- !`cmd` ---------------------------------------------------------------------- */

/* A range of the text that is a command's output (never scanned for @). */
typedef struct span {
    size_t from, to;
} span;

/* !` opens a command unless it ends a word ("Hello!`x`", "a`!`b"):
 * at the start, after a blank or after punctuation such as ( or [. */
static bool opens_shell(const char *text, const char *p)
{
    if (p[0] != '!' || p[1] != '`')
        return false;
    if (p == text)
        return true;
    unsigned char b = (unsigned char)p[-1];
    return !isalnum(b) && b != '_' && b != '`' && b != '!' && b < 0x80;
}

/* The text between two !`cmd`s, with the arguments put in. */
static void flush_literal(loom_str *lit, const char *args, bool *used, loom_str *out)
{
    if (!lit->len)
        return;
    char *t = command_substitute_part(lit->ptr, args, false, used);
    str_puts(out, t);
    free(t);
    str_clear(lit);
}

/* The body with its arguments put in and each !`cmd` replaced with what
 * running it gave; *spans gets the outputs' ranges in out, in order. The
 * !`cmd`s are found in the body as written — an argument that spells one
 * is text — and an argument inside one is a single quoted word; outputs
 * are never substituted again. -1 when the run was cancelled. */
static int run_shell_lines(expander *x, const char *text, const char *args, loom_str *out,
                           span **spans, size_t *nspans)
{
    bool used = false;
    loom_str lit = LOOM_STR_INIT;
    for (const char *p = text; *p;) {
        const char *end = NULL;
        if (opens_shell(text, p)) {
            end = p + 2;
            while (*end && *end != '`' && *end != '\n')
                end++;
            if (*end != '`' || end == p + 2)
                end = NULL;
        }
        if (!end) {
            str_putc(&lit, *p++);
            continue;
        }
        flush_literal(&lit, args, &used, out);
        if (cancelled(x)) {
            str_free(&lit);
            return -1;
        }
        char *raw = xstrndup(p + 2, (size_t)(end - p - 2));
        char *cmd = command_substitute_part(raw, args, true, &used);
        free(raw);
        json_t *input = json_pack("{s:s}", "command", cmd);
        tool_outcome o;
        run_call(x, "Bash", input, &o);
        loom_str got = LOOM_STR_INIT;
        str_append(&got, o.result.text.ptr ? o.result.text.ptr : "", o.result.text.len);
        while (got.len && (got.ptr[got.len - 1] == '\n' || got.ptr[got.len - 1] == '\r'))
            str_truncate(&got, got.len - 1);
        pipeline_cap_output(&got, COMMAND_OUTPUT_CAP);
        *spans = xrealloc(*spans, (*nspans + 1) * sizeof **spans);
        (*spans)[*nspans].from = out->len;
        str_append(out, str_cstr(&got), got.len);
        (*spans)[(*nspans)++].to = out->len;
        str_free(&got);
        tool_outcome_free(&o);
        json_decref(input);
        free(cmd);
        p = end + 1;
    }
    flush_literal(&lit, args, &used, out);
    str_free(&lit);
    if (!used)
        command_append_arguments(out, args);
    return 0;
}

/* ---- @file --------------------------------------------------------------------- */

typedef struct include {
    char *word;    /* as written, without '@' */
    char *abs;     /* the file (or, for a prompt's mention, a folder) */
} include;

typedef struct includes {
    include *v;
    size_t n;          /* pending after the current line */
    char **done;       /* files already included (each once per expansion) */
    size_t ndone;
    size_t total;      /* included so far */
    bool capped_noted;
} includes;

static bool is_regular_file(const char *abs)
{
    struct stat st;
    return stat(abs, &st) == 0 && S_ISREG(st.st_mode);
}

static bool is_dir(const char *abs)
{
    struct stat st;
    return stat(abs, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The file a word @x names, trailing punctuation ("see @a.c.") dropped
 * until one exists; NULL when none does. *len gets the word's kept length. */
static char *word_file(const expander *x, const char *w, size_t n, size_t *len)
{
    while (n) {
        char *rel = xstrndup(w, n);
        char *abs = path_make_absolute(rel, x->ctx->cwd);
        free(rel);
        if (abs && (is_regular_file(abs) || (x->images && is_dir(abs)))) {
            *len = n;
            return abs;
        }
        free(abs);
        if (!strchr(".,;:!?)]}'\"", w[n - 1]))
            break;
        n--;
    }
    return NULL;
}

static bool in_span(const span *s, size_t ns, size_t pos)
{
    for (size_t i = 0; i < ns; i++)
        if (pos >= s[i].from && pos < s[i].to)
            return true;
    return false;
}

/* A fence that no run of backticks in text closes early. */
static void put_fence(loom_str *out, const char *text)
{
    size_t run = 0, longest = 0;
    for (const char *p = text; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    for (size_t i = 0; i < (longest < 3 ? 3 : longest + 1); i++)
        str_putc(out, '`');
}

/* The pending includes, after the line just written. -1: cancelled. */
static int flush_includes(expander *x, includes *inc, loom_str *out)
{
    for (size_t i = 0; i < inc->n; i++) {
        include *f = &inc->v[i];
        if (cancelled(x))
            return -1;
        bool folder = is_dir(f->abs);
        /* A folder is listed (Glob, one level), a file read; both are
         * calls the rules judge like the model's. */
        json_t *input = folder ? json_pack("{s:s,s:s}", "pattern", "*", "path", f->abs)
                               : json_pack("{s:s}", "file_path", f->abs);
        tool_outcome o;
        run_call(x, folder ? "Glob" : "Read", input, &o);
        if (out->len && out->ptr[out->len - 1] != '\n')
            str_putc(out, '\n');
        if (o.result.is_error) {
            str_printf(out, "(@%s was not included: %s)\n", f->word, str_cstr(&o.result.text));
        } else if (o.result.image_data && x->images) {
            json_array_append_new(x->images,
                                  json_pack("{s:s,s:s}", "mediaType",
                                            o.result.image_media_type ? o.result.image_media_type
                                                                      : "image/png",
                                            "data", o.result.image_data));
            str_printf(out, "(@%s is attached as an image)\n", f->word);
        } else {
            loom_str text = LOOM_STR_INIT;
            str_append(&text, str_cstr(&o.result.text), o.result.text.len);
            pipeline_cap_output(&text, COMMAND_FILE_CAP);
            str_printf(out, folder ? "\nFiles in %s:\n" : "\nContents of %s:\n", f->word);
            put_fence(out, str_cstr(&text));
            str_putc(out, '\n');
            str_append(out, str_cstr(&text), text.len);
            if (text.len && text.ptr[text.len - 1] != '\n')
                str_putc(out, '\n');
            put_fence(out, str_cstr(&text));
            str_putc(out, '\n');
            str_free(&text);
        }
        tool_outcome_free(&o);
        json_decref(input);
        free(f->word);
        free(f->abs);
    }
    inc->n = 0;
    return 0;
}

/* Queues abs (taken) for after the line: 1, or 0 when it was included
 * already, -1 past COMMAND_MAX_INCLUDES. */
static int note_include(includes *inc, const char *word, size_t n, char *abs)
{
    for (size_t i = 0; i < inc->ndone; i++)
        if (strcmp(inc->done[i], abs) == 0) {
            free(abs);
            return 0;
        }
    if (inc->total >= COMMAND_MAX_INCLUDES) {
        free(abs);
        return -1;
    }
    inc->total++;
    inc->done = xrealloc(inc->done, (inc->ndone + 1) * sizeof(char *));
    inc->done[inc->ndone++] = xstrdup(abs);
    inc->v = xrealloc(inc->v, (inc->n + 1) * sizeof *inc->v);
    inc->v[inc->n].word = xstrndup(word, n);
    inc->v[inc->n++].abs = abs;
    return 1;
}

/* Copies text to out, each line followed by the files its @words name.
 * -1: cancelled. */
static int include_files(expander *x, const char *text, size_t len, const span *spans, size_t ns,
                         loom_str *out)
{
    includes inc = {0};
    int rc = 0;
    size_t skipped = 0;
    for (size_t i = 0; i < len && rc == 0; i++) {
        char ch = text[i];
        bool ours = !in_span(spans, ns, i);
        if (ch == '@' && ours && (i == 0 || isspace((unsigned char)text[i - 1]))) {
            size_t j = i + 1;
            while (j < len && !isspace((unsigned char)text[j]) && !in_span(spans, ns, j))
                j++;
            size_t keep = 0;
            char *abs = j > i + 1 ? word_file(x, text + i + 1, j - i - 1, &keep) : NULL;
            if (abs && note_include(&inc, text + i + 1, keep, abs) < 0)
                skipped++;
        }
        str_putc(out, ch);
        if (ch == '\n' && ours && inc.n)
            rc = flush_includes(x, &inc, out);
    }
    if (rc == 0 && inc.n)
        rc = flush_includes(x, &inc, out);
    if (rc == 0 && skipped)
        str_printf(out, "\n(%zu more @files were not included: at most %d per %s)\n", skipped,
                   COMMAND_MAX_INCLUDES, x->c ? "command" : "prompt");
    for (size_t i = 0; i < inc.n; i++) {
        free(inc.v[i].word);
        free(inc.v[i].abs);
    }
    free(inc.v);
    for (size_t i = 0; i < inc.ndone; i++)
        free(inc.done[i]);
    free(inc.done);
    return rc;
}

/* ---- the whole expansion ------------------------------------------------------------ */

int command_expand(const command_def *c, const char *args, const tool_registry *reg,
                   tool_ctx *ctx, loom_str *out, loom_error *err)
{
    if (!c || !reg || !ctx || !out) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "command_expand: a command, a registry, a context and an output are "
                       "required");
        return -1;
    }
    if (c->allowed_tools && ctx->gov) {
        char by[256];
        snprintf(by, sizeof by, "command /%.200s", c->name);
        governance_grant_run(ctx->gov, (const char *const *)c->allowed_tools, by);
    }
    expander x = {.c = c, .reg = reg, .ctx = ctx};
    loom_str shelled = LOOM_STR_INIT;
    span *spans = NULL;
    size_t ns = 0;
    int rc = run_shell_lines(&x, c->body ? c->body : "", args ? args : "", &shelled, &spans, &ns);
    if (rc == 0) {
        loom_str done = LOOM_STR_INIT;
        rc = include_files(&x, str_cstr(&shelled), shelled.len, spans, ns, &done);
        if (rc == 0)
            str_append(out, str_cstr(&done), done.len);
        str_free(&done);
    }
    str_free(&shelled);
    free(spans);
    if (rc != 0) {
        loom_error_set(err, LOOM_ERR_RUN_CANCELLED,
                       "/%s: cancelled while its !`cmd` lines or @files ran; nothing was sent",
                       c->name);
        return -1;
    }
    return 0;
}

/* ---- a plain prompt: @mentions and images by path --------------------------------- */

static bool image_name(const char *w, size_t n)
{
    static const char *const exts[] = {".png", ".jpg", ".jpeg", ".gif", ".webp"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t e = strlen(exts[i]);
        if (n > e && strncasecmp(w + n - e, exts[i], e) == 0)
            return true;
    }
    return false;
}

/* Every word of text (not an @word) that is the path of an existing image
 * file, quotes and trailing punctuation dropped, is read through the
 * pipeline as a Read call: the image goes to x->images, a refusal is noted
 * in out. -1: cancelled. */
static int attach_images(expander *x, const char *text, loom_str *out)
{
    size_t attached = 0;
    char **seen = NULL;
    size_t nseen = 0;
    int rc = 0;
    for (const char *p = text; *p && rc == 0;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        const char *w = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - w);
        while (n && strchr("'\"`(<[", *w)) {
            w++;
            n--;
        }
        while (n && strchr(".,;:!?)>]}'\"`", w[n - 1]) && !image_name(w, n))
            n--;
        if (!n || *w == '@' || !image_name(w, n))
            continue;
        char *rel = xstrndup(w, n);
        char *abs = path_make_absolute(rel, x->ctx->cwd);
        bool dup = false;
        for (size_t i = 0; abs && i < nseen; i++)
            dup = dup || !strcmp(seen[i], abs);
        if (!abs || dup || !is_regular_file(abs) || attached >= COMMAND_MAX_INCLUDES) {
            free(abs);
            free(rel);
            continue;
        }
        if (cancelled(x)) {
            rc = -1;
        } else {
            json_t *input = json_pack("{s:s}", "file_path", abs);
            tool_outcome o;
            run_call(x, "Read", input, &o);
            if (!o.result.is_error && o.result.image_data) {
                json_array_append_new(
                    x->images, json_pack("{s:s,s:s}", "mediaType",
                                         o.result.image_media_type ? o.result.image_media_type
                                                                   : "image/png",
                                         "data", o.result.image_data));
                attached++;
            } else {
                str_printf(out, "%s(%s was not attached: %s)", out->len ? "\n" : "", rel,
                           o.result.is_error ? str_cstr(&o.result.text)
                                             : "it is not an image Read can show");
            }
            tool_outcome_free(&o);
            json_decref(input);
        }
        seen = xrealloc(seen, (nseen + 1) * sizeof *seen);
        seen[nseen++] = abs;
        free(rel);
    }
    for (size_t i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    return rc;
}

int command_expand_mentions(const char *text, const tool_registry *reg, tool_ctx *ctx,
                            loom_str *out, json_t *images, loom_error *err)
{
    if (!text || !reg || !ctx || !out || !images) {
        loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                       "command_expand_mentions: a text, a registry, a context, an output and "
                       "an image array are required");
        return -1;
    }
    expander x = {.c = NULL, .reg = reg, .ctx = ctx, .images = images};
    loom_str done = LOOM_STR_INIT;
    int rc = include_files(&x, text, strlen(text), NULL, 0, &done);
    loom_str notes = LOOM_STR_INIT;
    if (rc == 0)
        rc = attach_images(&x, text, &notes);
    if (rc == 0) {
        str_append(out, str_cstr(&done), done.len);
        if (notes.len)
            str_printf(out, "\n\n%s", str_cstr(&notes));
    }
    str_free(&done);
    str_free(&notes);
    if (rc != 0) {
        loom_error_set(err, LOOM_ERR_RUN_CANCELLED,
                       "cancelled while the prompt's @files and images were read; nothing was "
                       "sent");
        return -1;
    }
    return 0;
}
