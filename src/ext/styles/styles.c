/* styles.c — output styles (styles.h): the three built-ins, and the
 * output-styles/NAME.md files of every source folder, parsed into
 * output_style records.
 *
 * The files are untrusted text (a repository's, a plugin's): each one is
 * read bounded (a regular file of at most FRONTMATTER_MAX_BYTES, never a
 * FIFO), and every fault — unreadable, bad frontmatter, a key of the wrong
 * type, a bad name, an empty or oversized body — is a warning naming the
 * file and the problem; the file is skipped or the key dropped, the rest
 * load. Unknown frontmatter keys are ignored, as Claude Code does, so its
 * style files load unchanged.
 *
 * A set owns everything in it. Built by one thread, read-only afterwards:
 * any thread may read it. */
#include "ext/styles/styles.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fileio.h"
#include "base/frontmatter.h"
#include "base/path.h"
#include "base/str.h"
#include "base/warn_list.h"

struct style_set {
    output_style *v;
    size_t n;
    size_t nbuiltin;
    warn_list warnings;      /* the files' warnings, then the skipped folders' notices */
};

/* ---- the built-ins ------------------------------------------------------------ */

/* Written for Loom (the idea of each is Claude Code's: code.claude.com/docs/
 * en/output-styles, "Built-in output styles"). Both keep the coding rules:
 * they change how Loom talks while it still does the engineering work. */
static const char EXPLANATORY_BODY[] =
    "The person wants to understand the work as well as have it done. Do the task fully, and "
    "explain what is worth knowing along the way.\n"
    "\n"
    "## Insights\n"
    "- Before and after a change that involved a real choice, add a short note on lines of its "
    "own, starting with \"Insight:\", with one to three points: why this approach and not "
    "another, which pattern or convention of this codebase the change follows, what trade-off "
    "was accepted.\n"
    "- Make each insight about this project and this change, not a general programming lesson.\n"
    "- Insights go in your replies to the person, never into the code, comments or commit "
    "messages.\n"
    "- Longer replies are fine where the explanation earns its place; do not pad them.";

static const char LEARNING_BODY[] =
    "The person wants to learn by doing. Share the work with them: do the scaffolding "
    "yourself and hand them the small parts where a decision teaches something.\n"
    "\n"
    "## Insights\n"
    "- Where you made a real choice, add a short note on lines of its own, starting with "
    "\"Insight:\", saying why, in terms of this codebase. Keep insights out of the code.\n"
    "\n"
    "## Pieces for the person\n"
    "- When a change holds a small piece (about 2 to 10 lines) that carries a decision — a "
    "business rule, how an error is handled, the choice of a data structure, the heart of an "
    "algorithm — write the code around it and leave that piece to the person: put a "
    "`TODO(human)` comment where it goes, saying what it must do.\n"
    "- Then stop and ask them to write it: name the file and the place, what the piece must "
    "do, what to weigh, and how to check that it works. One piece at a time.\n"
    "- When they have written it, read it, say what works and what could be better, and go "
    "on from there.\n"
    "- Boilerplate, repetitive code and configuration you write yourself: they teach nothing.";

static const struct {
    const char *name, *description, *body;
} builtins[] = {
    {"default", "Loom's own: does the task efficiently and answers briefly", NULL},
    {"explanatory", "Explains its choices as it works: short Insight notes on why the code "
                    "takes the shape it does", EXPLANATORY_BODY},
    {"learning", "Learning by doing: Insight notes, and small pieces left for you to write, "
                 "marked TODO(human)", LEARNING_BODY},
};

/* ---- one file ----------------------------------------------------------------- */

/* A style's name as a person types it after /output-style: printable, no
 * spaces at its ends, no control characters, no ':' (the plugin prefix's,
 * so a project file cannot take a plugin style's name). Claude Code's
 * names may hold spaces ("For Beginner"), so inner spaces are allowed. */
static bool valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > OUTPUT_STYLE_NAME_MAX || s[0] == ' ' || s[n - 1] == ' ')
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == ':')
            return false;
    return true;
}

/* true/false, also as the quoted strings Claude Code's YAML reader takes. */
static int read_bool(const json_t *v, bool *out)
{
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return 0;
    }
    const char *t = json_string_value(v);
    if (t && (!strcasecmp(t, "true") || !strcasecmp(t, "false"))) {
        *out = !strcasecmp(t, "true");
        return 0;
    }
    return -1;
}

void output_style_clear(output_style *st)
{
    if (!st)
        return;
    free(st->name);
    free(st->description);
    free(st->body);
    free(st->source);
    memset(st, 0, sizeof *st);
}

int output_style_parse(const char *path, const char *text, output_style *out,
                       void (*warn_fn)(void *ctx, const char *msg), void *warn_ctx,
                       loom_error *err)
{
    memset(out, 0, sizeof *out);
    if (!path)
        path = "(output style)";
    loom_error fe = {0};
    const char *body = text;
    json_t *fm = frontmatter_parse(text, &body, &fe);
    if (!fm && fe.code != FRONTMATTER_ERR_NONE) {
        loom_error_set(err, LOOM_ERR_CONFIG, "%s: %s", path, fe.message);
        return -1;
    }
    if (!fm)
        body = text; /* no frontmatter: every key takes its default */

    /* The default name is the file's stem: "beginner.md" → "beginner". */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t stem = strlen(base);
    if (stem > 3 && !strcmp(base + stem - 3, ".md"))
        stem -= 3;
    const json_t *name = json_object_get(fm, "name");
    const char *nm = NULL;
    char *from_stem = NULL;
    if (name && !json_is_null(name)) {
        nm = json_string_value(name);
        if (!nm || !valid_name(nm)) {
            json_decref(fm);
            loom_error_set(err, LOOM_ERR_CONFIG,
                           "%s: key 'name': expected 1 to %d printable characters, no ':'",
                           path, OUTPUT_STYLE_NAME_MAX);
            return -1;
        }
    } else {
        from_stem = xstrndup(base, stem);
        if (!valid_name(from_stem)) {
            free(from_stem);
            json_decref(fm);
            loom_error_set(err, LOOM_ERR_CONFIG,
                           "%s: the file's name is not a usable style name (give one with "
                           "'name' in the frontmatter)", path);
            return -1;
        }
        nm = from_stem;
    }

    char *b = frontmatter_body_trim(body);
    if (!*b || strlen(b) > OUTPUT_STYLE_BODY_MAX) {
        bool empty = !*b;
        free(b);
        free(from_stem);
        json_decref(fm);
        if (empty)
            loom_error_set(err, LOOM_ERR_CONFIG,
                           "%s: the body is empty (it is the style's instructions to the model)",
                           path);
        else
            loom_error_set(err, LOOM_ERR_CONFIG,
                           "%s: the body is larger than %d KiB (it goes into every request)",
                           path, OUTPUT_STYLE_BODY_MAX / 1024);
        return -1;
    }

    out->name = xstrdup(nm);
    free(from_stem);
    out->body = b;
    out->source = xstrdup(path);
    const json_t *desc = json_object_get(fm, "description");
    if (desc && !json_is_null(desc) && !json_is_string(desc) && warn_fn) {
        loom_str m = LOOM_STR_INIT;
        str_printf(&m, "%s: key 'description': expected text; ignored", path);
        warn_fn(warn_ctx, str_cstr(&m));
        str_free(&m);
    }
    out->description = xstrdup(json_is_string(desc) ? json_string_value(desc) : "");
    if (strlen(out->description) > OUTPUT_STYLE_DESCRIPTION_MAX) {
        /* Cut at a character boundary, never inside a UTF-8 sequence. */
        size_t n = OUTPUT_STYLE_DESCRIPTION_MAX;
        while (n > 0 && ((unsigned char)out->description[n] & 0xC0) == 0x80)
            n--;
        out->description[n] = '\0';
        if (warn_fn) {
            loom_str m = LOOM_STR_INIT;
            str_printf(&m, "%s: key 'description': longer than %d bytes; cut", path,
                       OUTPUT_STYLE_DESCRIPTION_MAX);
            warn_fn(warn_ctx, str_cstr(&m));
            str_free(&m);
        }
    }
    const json_t *keep = json_object_get(fm, "keep-coding-instructions");
    if (keep && !json_is_null(keep) && read_bool(keep, &out->keep_coding_instructions) != 0) {
        out->keep_coding_instructions = false;
        if (warn_fn) {
            loom_str m = LOOM_STR_INIT;
            str_printf(&m, "%s: key 'keep-coding-instructions': expected true or false; the "
                       "coding rules are left out", path);
            warn_fn(warn_ctx, str_cstr(&m));
            str_free(&m);
        }
    }
    json_decref(fm);
    return 0;
}

/* ---- the folders ------------------------------------------------------------- */

/* A later source wins by name (case-insensitive, as /output-style finds
 * them); the replaced style keeps its place. */
static void set_add(style_set *s, output_style *st)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcasecmp(s->v[i].name, st->name)) {
            output_style_clear(&s->v[i]);
            s->v[i] = *st;
            return;
        }
    s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    s->v[s->n++] = *st;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every <dir>/<name>.md in name order; plugin styles are named
 * "plugin:name" so they never shadow another source's. */
static void load_dir(style_set *s, const ext_dir *d)
{
    DIR *dh = opendir(d->path);
    if (!dh) {
        if (errno != ENOENT && errno != ENOTDIR)
            warn_list_addf(&s->warnings, "%s: cannot be read: %s", d->path, strerror(errno));
        return;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dh)) != NULL) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 3, ".md") != 0)
            continue;
        if (n == OUTPUT_STYLE_FILES_MAX) {
            warn_list_addf(&s->warnings, "%s: more than %d style files; the rest are not read",
                           d->path, OUTPUT_STYLE_FILES_MAX);
            break;
        }
        names = xrealloc(names, (n + 1) * sizeof *names);
        names[n++] = xstrdup(e->d_name);
    }
    closedir(dh);
    if (n)
        qsort(names, n, sizeof *names, name_cmp);
    for (size_t i = 0; i < n; i++) {
        char *path = path_join(d->path, names[i]);
        loom_str why = LOOM_STR_INIT;
        char *text = file_read_text(path, FRONTMATTER_MAX_BYTES, FILE_TEXT_NO_NUL, &why);
        if (!text) {
            warn_list_addf(&s->warnings, "%s: %s; skipped", path, str_cstr(&why));
        } else {
            output_style st;
            loom_error perr = {0};
            if (output_style_parse(path, text, &st, warn_list_sink, &s->warnings, &perr) != 0) {
                warn_list_addf(&s->warnings, "%s; skipped", perr.message);
            } else {
                if (d->plugin) {
                    loom_str full = LOOM_STR_INIT;
                    str_printf(&full, "%s:%s", d->plugin, st.name);
                    free(st.name);
                    st.name = str_steal(&full);
                }
                set_add(s, &st);
            }
        }
        free(text);
        str_free(&why);
        free(path);
        free(names[i]);
    }
    free(names);
}

static int style_cmp(const void *a, const void *b)
{
    return strcasecmp(((const output_style *)a)->name, ((const output_style *)b)->name);
}

style_set *style_set_load(const ext_source_opts *o, loom_error *err)
{
    (void)err;
    style_set *s = xcalloc(1, sizeof *s);
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        output_style st = {
            .name = xstrdup(builtins[i].name),
            .description = xstrdup(builtins[i].description),
            .body = builtins[i].body ? xstrdup(builtins[i].body) : NULL,
            .keep_coding_instructions = true,
            .source = xstrdup("built-in"),
        };
        set_add(s, &st);
    }
    s->nbuiltin = s->n;
    json_t *notices = json_array();
    if (o) {
        ext_dirs dirs;
        ext_dirs_for("output-styles", o, &dirs, notices);
        for (size_t i = 0; i < dirs.n; i++)
            load_dir(s, &dirs.v[i]);
        ext_dirs_free(&dirs);
    }
    warn_list_add_strings(&s->warnings, notices);
    json_decref(notices);
    /* The files' styles after the built-ins, by name. A file replacing a
     * built-in stays in the built-in's place. */
    if (s->n > s->nbuiltin)
        qsort(s->v + s->nbuiltin, s->n - s->nbuiltin, sizeof *s->v, style_cmp);
    return s;
}

void style_set_free(style_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        output_style_clear(&s->v[i]);
    free(s->v);
    warn_list_free(&s->warnings);
    free(s);
}

size_t style_set_count(const style_set *s)
{
    return s ? s->n : 0;
}

const output_style *style_set_at(const style_set *s, size_t i)
{
    return s && i < s->n ? &s->v[i] : NULL;
}

const output_style *style_set_find(const style_set *s, const char *name)
{
    for (size_t i = 0; s && name && i < s->n; i++)
        if (!strcasecmp(s->v[i].name, name))
            return &s->v[i];
    return NULL;
}

size_t style_set_warning_count(const style_set *s)
{
    return s ? warn_list_count(&s->warnings) : 0;
}

const char *style_set_warning(const style_set *s, size_t i)
{
    return s ? warn_list_at(&s->warnings, i) : NULL;
}
