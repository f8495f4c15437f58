/* slash_context.c — the REPL's view of and hold on the context window:
 * /compact, /context, /events, /memory and `# text` lines. Everything goes
 * through loom.h (loom_session_compact, loom_session_context_json,
 * loom_session_events_json, loom_session_remember); this file only words
 * the answers. */
#include "surfaces/cli/slash_context.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/json.h"
#include "base/str.h"
#include "surfaces/cli/slash.h"
#include "surfaces/cli/spinner.h"

static json_t *parse_owned(char *text, const char *what)
{
    loom_error ignore;
    json_t *doc = text ? json_parse(text, strlen(text), what, &ignore) : NULL;
    free(text);
    return doc;
}

/* ---- /compact --------------------------------------------------------------- */

void slash_compact(slash_host *r, const char *args)
{
    if (!r->out.spin) /* no spinner (not a terminal): say it once */
        term_printf(&r->out, TONE_DIM, "Compacting\xe2\x80\xa6\n");
    char *report = NULL;
    loom_status st;
    r->ops->busy_begin(r, "Compacting\xe2\x80\xa6");
    int rc = loom_session_compact(r->session, *args ? args : NULL, &report, &st);
    r->ops->busy_end(r);
    if (rc < 0) {
        term_printf(&r->out, TONE_RED, "Compaction failed: %s\n", st.message);
        free(report);
        return;
    }
    json_t *doc = parse_owned(report, "compaction report");
    if (rc == 1) {
        char before[32], after[32];
        slash_thousands(json_get_int(doc, "tokens_before", 0), before, sizeof before);
        slash_thousands(json_get_int(doc, "tokens_after", 0), after, sizeof after);
        term_printf(&r->out, TONE_GREEN, "Compacted: ~%s \xe2\x86\x92 ~%s tokens\n", before, after);
        term_printf(&r->out, TONE_DIM, "The history is now a summary \xc2\xb7 /context shows what the "
                    "next request holds\n");
    } else {
        term_printf(&r->out, TONE_YELLOW, "Not compacted: %s\n",
                    json_get_str(doc, "message", "skipped"));
    }
    json_decref(doc);
}

/* ---- /context --------------------------------------------------------------- */

static const char *source_about(const char *source)
{
    if (!strcmp(source, "api-usage"))
        return "the provider's count of the last request, plus what was added since";
    if (!strcmp(source, "api-scaled"))
        return "estimated here, scaled by the provider's last count";
    if (!strcmp(source, "local-estimate"))
        return "estimated here, about 4 characters a token";
    return "";
}

static void show_memory_files(slash_host *r, const json_t *files, const char *indent)
{
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        term_printf(&r->out, TONE_PLAIN, "%s%s", indent, json_get_str(f, "path", "?"));
        term_printf(&r->out, TONE_DIM, "  %s\n", json_get_str(f, "kind", ""));
    }
    if (json_array_size(files) == 0)
        term_printf(&r->out, TONE_DIM, "%s(none)\n", indent);
}

void slash_context(slash_host *r, const char *args)
{
    (void)args;
    json_t *doc = parse_owned(loom_session_context_json(r->session), "context");
    if (!doc) {
        term_printf(&r->out, TONE_RED, "the context could not be read\n");
        return;
    }
    const char *error = json_get_str(doc, "error", NULL);
    if (error) {
        term_printf(&r->out, TONE_RED, "The next request could not be assembled: %s\n", error);
    } else {
        long long window = json_get_int(doc, "window", 0);
        long long tokens = json_get_int(doc, "tokens", 0);
        const char *source = json_get_str(doc, "source", "");
        char w[32], t[32];
        slash_thousands(window, w, sizeof w);
        slash_thousands(tokens, t, sizeof t);
        if (window > 0)
            term_printf(&r->out, TONE_PLAIN, "Context    %s of %s tokens \xc2\xb7 %.1f%%\n", t, w,
                        100.0 * json_get_num(doc, "rho", 0));
        else
            term_printf(&r->out, TONE_PLAIN, "Context    %s tokens (window unknown)\n", t);
        term_printf(&r->out, TONE_PLAIN, "Source     %s", source);
        term_printf(&r->out, TONE_DIM, " (%s)\n", source_about(source));

        /* Shares of the partitions' sum: they are estimated locally even
         * when the total comes from the provider. Under "extensions", its
         * parts (skill catalog, MCP instructions, active skills…), each with
         * its budget and how many items it holds when it has them. */
        static const char *const parts[] = {"system", "memory", "extensions", "tools", "history",
                                            "working"};
        const json_t *p = json_get_obj(doc, "partitions");
        const json_t *ext = json_get_arr(doc, "extensions");
        long long sum = 0;
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            sum += json_get_int(p, parts[i], 0);
        term_printf(&r->out, TONE_DIM, "  %-10s %10s %7s\n", "partition", "tokens", "share");
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
            bool is_ext = !strcmp(parts[i], "extensions");
            if (!json_object_get(p, parts[i]) && !(is_ext && json_array_size(ext)))
                continue; /* a library without the partition */
            long long n = json_get_int(p, parts[i], 0);
            char num[32];
            slash_thousands(n, num, sizeof num);
            term_printf(&r->out, TONE_PLAIN, "  %-10s %10s %6.1f%%\n", parts[i], num,
                        sum > 0 ? 100.0 * (double)n / (double)sum : 0.0);
            size_t k;
            json_t *e;
            json_array_foreach(is_ext ? ext : NULL, k, e) {
                char tok[32], budget[32];
                slash_thousands(json_get_int(e, "tokens", 0), tok, sizeof tok);
                term_printf(&r->out, TONE_PLAIN, "    %-18s %10s", json_get_str(e, "name", "?"), tok);
                if (json_get_int(e, "budget", 0) > 0) {
                    slash_thousands(json_get_int(e, "budget", 0), budget, sizeof budget);
                    term_printf(&r->out, TONE_DIM, " of %s", budget);
                }
                long long count = (long long)json_get_int(e, "count", 0);
                if (json_object_get(e, "count"))
                    term_printf(&r->out, TONE_DIM, " \xc2\xb7 %lld item%s", count, count == 1 ? "" : "s");
                term_printf(&r->out, TONE_PLAIN, "\n");
            }
        }

        const json_t *next = json_get_obj(doc, "next_step");
        if (next) {
            char at[32];
            slash_thousands(json_get_int(next, "at_tokens", 0), at, sizeof at);
            term_printf(&r->out, TONE_PLAIN, "Next step  %s at %s tokens", json_get_str(next, "name", "?"),
                        at);
            term_printf(&r->out, TONE_DIM, " (%.0f%% of the window)\n",
                        100.0 * json_get_num(next, "threshold", 0));
        } else {
            term_printf(&r->out, TONE_YELLOW, "Next step  none left: the window is full "
                        "(/compact, or /clear for a new session)\n");
        }
    }
    term_printf(&r->out, TONE_PLAIN, "Memory\n");
    show_memory_files(r, json_get_arr(doc, "memory_files"), "  ");
    json_decref(doc);
}

/* ---- /events ---------------------------------------------------------------- */

/* The event surface of the session's working memory (loom_session_events_json,
 * docs/heartbeat.md), oldest first, one line each:
 *   12:03:04  projected     high      filesystem: src/a.c modified (…)  ev_0193…
 * and, once the model acknowledged one, its disposition and note. */
void slash_events(slash_host *r, const char *args)
{
    (void)args;
    json_t *doc = parse_owned(loom_session_events_json(r->session), "events");
    size_t n = json_array_size(doc);
    if (n == 0) {
        term_printf(&r->out, TONE_PLAIN, "No events.\n");
        term_printf(&r->out, TONE_DIM, "The heartbeat reports changes seen while a run works "
                    "(a \"heartbeat\" block in settings; docs/heartbeat.md)\n");
        json_decref(doc);
        return;
    }
    term_printf(&r->out, TONE_BOLD, "Events (%zu)\n", n);
    size_t i;
    json_t *e;
    json_array_foreach(doc, i, e) {
        char when[16] = "--:--:--";
        time_t t = (time_t)(json_get_int(e, "detected_ms", 0) / 1000);
        struct tm tm;
        if (t > 0 && localtime_r(&t, &tm))
            strftime(when, sizeof when, "%H:%M:%S", &tm);
        const char *urgency = json_get_str(e, "urgency", "?");
        const char *summary = json_get_str(e, "summary", "");
        const char *disposition = json_get_str(e, "disposition", NULL);
        const char *note = json_get_str(e, "note", NULL);
        /* Summaries name files, notes come from the model: no escapes pass. */
        loom_str text = LOOM_STR_INIT;
        const char *src = json_get_str(e, "source", "?");
        term_put_clipped(&text, src, strlen(src), 0);
        str_puts(&text, ": ");
        term_put_clipped(&text, summary, strlen(summary), 0);
        loom_str after = LOOM_STR_INIT;
        if (disposition) {
            str_puts(&after, " \xc2\xb7 ");
            term_put_clipped(&after, disposition, strlen(disposition), 0);
            if (note && *note) {
                str_puts(&after, ": ");
                term_put_clipped(&after, note, strlen(note), 0);
            }
        }
        term_printf(&r->out, TONE_DIM, "  %s  ", when);
        term_printf(&r->out, TONE_PLAIN, "%-12s ", json_get_str(e, "state", "?"));
        term_printf(&r->out, !strcmp(urgency, "critical") ? TONE_ALERT
                       : !strcmp(urgency, "high")   ? TONE_YELLOW
                                                    : TONE_PLAIN,
                    "%-8s ", urgency);
        term_printf(&r->out, TONE_PLAIN, "%s  ", str_cstr(&text));
        term_printf(&r->out, TONE_DIM, "%s", json_get_str(e, "event_id", ""));
        term_printf(&r->out, TONE_PLAIN, "%s\n", str_cstr(&after));
        str_free(&text);
        str_free(&after);
    }
    term_printf(&r->out, TONE_DIM, "pending: projected \xc2\xb7 acknowledged: the model gave a "
                "disposition \xc2\xb7 resolved: done\n");
    json_decref(doc);
}

/* ---- /memory and # ------------------------------------------------------------ */

static bool mtime_of(const char *path, struct timespec *t)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return false;
    *t = sb.st_mtim;
    return true;
}

/* What /memory edit offers, numbered from 1: every instructions or memory
 * file the agent loaded, then ./AGENTS.md to create when it is not among
 * them. [{"path", "name" (as shown), "kind"}]. */
static json_t *memory_choices(slash_host *r)
{
    json_t *doc = parse_owned(loom_session_context_json(r->session), "context");
    json_t *out = json_array();
    loom_str local = LOOM_STR_INIT;
    str_printf(&local, "%s/AGENTS.md", r->cwd);
    char *local_real = realpath(local.ptr, NULL);
    bool have_local = false;
    size_t i;
    json_t *f;
    json_array_foreach(json_get_arr(doc, "memory_files"), i, f) {
        const char *path = json_get_str(f, "path", NULL);
        if (!path)
            continue;
        bool is_local = !strcmp(path, local.ptr) || (local_real && !strcmp(path, local_real));
        have_local |= is_local;
        json_array_append_new(out, json_pack("{s:s,s:s,s:s}", "path", path, "name",
                                             is_local ? "./AGENTS.md" : path, "kind",
                                             json_get_str(f, "kind", "")));
    }
    if (!have_local)
        json_array_append_new(out, json_pack("{s:s,s:s,s:s}", "path", local.ptr, "name",
                                             "./AGENTS.md", "kind", "new"));
    free(local_real);
    str_free(&local);
    json_decref(doc);
    return out;
}

/* The path in single quotes for bash: ' becomes '\''. */
static void put_quoted(loom_str *s, const char *path)
{
    str_putc(s, '\'');
    for (const char *p = path; *p; p++) {
        if (*p == '\'')
            str_puts(s, "'\\''");
        else
            str_putc(s, *p);
    }
    str_putc(s, '\'');
}

/* $EDITOR on one file, then the agent is made again so the next message's
 * request holds what was written (memory is read when the agent is
 * created). */
static void memory_edit_file(slash_host *r, const char *path, const char *name)
{
    loom_str cmd = LOOM_STR_INIT;
    /* The shell splits $EDITOR into words, as git and others do. */
    str_puts(&cmd, "$EDITOR ");
    if (!strcmp(name, "./AGENTS.md"))
        str_puts(&cmd, "./AGENTS.md");
    else
        put_quoted(&cmd, path);
    struct timespec before = {0}, after = {0};
    bool had = mtime_of(path, &before);
    r->ops->run_shell(r, cmd.ptr);
    str_free(&cmd);
    bool has = mtime_of(path, &after);
    if (has == had && (!has || (before.tv_sec == after.tv_sec && before.tv_nsec == after.tv_nsec))) {
        term_printf(&r->out, TONE_DIM, "%s unchanged\n", name);
        return;
    }
    loom_status st;
    if (r->ops->reopen(r, NULL, &st) != 0) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
        term_printf(&r->out, TONE_YELLOW, "%s was saved; it applies from the next session\n", name);
        return;
    }
    term_printf(&r->out, TONE_GREEN, "%s reloaded: it applies from the next message\n", name);
}

/* /memory edit [N]: the one file there is, file N of the list, or the
 * numbered list to choose from. */
static void memory_edit(slash_host *r, const char *which)
{
    const char *editor = getenv("EDITOR");
    if (!editor || !*editor) {
        term_printf(&r->out, TONE_YELLOW, "$EDITOR is not set: set it (export EDITOR=vim) to use "
                    "/memory edit, or edit the files yourself\n");
        return;
    }
    json_t *choices = memory_choices(r);
    size_t n = json_array_size(choices);
    long pick = n == 1 ? 1 : 0;
    if (*which) {
        char *end;
        pick = strtol(which, &end, 10);
        if (*end || pick < 1 || (size_t)pick > n) {
            term_printf(&r->out, TONE_YELLOW, "/memory edit N: N is a number from 1 to %zu\n", n);
            pick = -1;
        }
    }
    if (pick == 0) {
        term_printf(&r->out, TONE_PLAIN, "Memory files to edit\n");
        size_t i;
        json_t *c;
        json_array_foreach(choices, i, c) {
            term_printf(&r->out, TONE_PLAIN, "  %zu  %s", i + 1, json_get_str(c, "name", "?"));
            const char *kind = json_get_str(c, "kind", "");
            term_printf(&r->out, TONE_DIM, "  %s\n", !strcmp(kind, "new") ? "(create)" : kind);
        }
        term_printf(&r->out, TONE_DIM, "/memory edit N opens file N in %s\n", editor);
    } else if (pick > 0) {
        const json_t *c = json_array_get(choices, (size_t)pick - 1);
        memory_edit_file(r, json_get_str(c, "path", ""), json_get_str(c, "name", ""));
    }
    json_decref(choices);
}

/* The instructions files found and not loaded, with why (from the agent's
 * list of configuration files). */
static void show_skipped_memory(slash_host *r)
{
    json_t *doc = parse_owned(loom_agent_sources_json(r->agent), "sources");
    size_t i;
    json_t *f;
    bool title = false;
    json_array_foreach(json_get_arr(doc, "files"), i, f) {
        if (strcmp(json_get_str(f, "kind", ""), "memory") ||
            strcmp(json_get_str(f, "state", ""), "skipped"))
            continue;
        if (!title)
            term_printf(&r->out, TONE_PLAIN, "Found and not loaded\n");
        title = true;
        term_printf(&r->out, TONE_PLAIN, "  %s", json_get_str(f, "path", "?"));
        term_printf(&r->out, TONE_DIM, "  %s\n", json_get_str(f, "why", ""));
    }
    json_decref(doc);
}

/* What recall put in front of the model in this session's runs, and why;
 * the last extraction's outcome (loom_session_memory_json). */
static void show_recalled(slash_host *r)
{
    json_t *doc = parse_owned(loom_session_memory_json(r->session), "memory");
    size_t i, k;
    json_t *run, *it;
    term_printf(&r->out, TONE_PLAIN, "Recalled this session");
    term_printf(&r->out, TONE_DIM, " (.loom/memory and E1's patterns/failures, by relevance to "
                "the goal)\n");
    if (!json_array_size(json_get_arr(doc, "recalled")))
        term_printf(&r->out, TONE_DIM, "  nothing yet\n");
    json_array_foreach(json_get_arr(doc, "recalled"), i, run) {
        json_array_foreach(json_get_arr(run, "items"), k, it) {
            const char *path = json_get_str(it, "path", "?");
            const char *base = strrchr(path, '/');
            term_printf(&r->out, TONE_PLAIN, "  %s", base ? base + 1 : path);
            term_printf(&r->out, TONE_DIM, "  %s · score %.1f · %s\n",
                        json_get_str(it, "kind", "memory"), json_get_num(it, "score", 0),
                        json_get_str(it, "why", ""));
        }
    }
    const json_t *x = json_object_get(doc, "extraction");
    if (json_is_object(x)) {
        term_printf(&r->out, TONE_PLAIN, "Last extraction");
        term_printf(&r->out, TONE_DIM, "  %s%s%s · written %zu, merged %zu, replaced %zu, "
                    "dropped %zu\n", json_get_str(x, "status", "?"),
                    json_object_get(x, "reason") ? ": " : "", json_get_str(x, "reason", ""),
                    json_array_size(json_get_arr(x, "written")),
                    json_array_size(json_get_arr(x, "merged")),
                    json_array_size(json_get_arr(x, "replaced")),
                    json_array_size(json_get_arr(x, "dropped")));
    }
    json_decref(doc);
}

void slash_memory(slash_host *r, const char *args)
{
    if (!strncmp(args, "edit", 4) && (args[4] == '\0' || args[4] == ' ')) {
        const char *which = args + 4;
        while (*which == ' ')
            which++;
        memory_edit(r, which);
        return;
    }
    if (*args) {
        term_printf(&r->out, TONE_YELLOW, "usage: /memory lists the memory files, /memory edit [N] "
                    "opens one in $EDITOR\n");
        return;
    }
    json_t *doc = parse_owned(loom_session_context_json(r->session), "context");
    term_printf(&r->out, TONE_PLAIN, "Memory files");
    term_printf(&r->out, TONE_DIM, " (sent with every request)\n");
    show_memory_files(r, json_get_arr(doc, "memory_files"), "  ");
    json_decref(doc);
    show_skipped_memory(r);
    show_recalled(r);
    term_printf(&r->out, TONE_DIM, "# text        adds \"- text\" to ./AGENTS.md, from the next message "
                "on\n");
    const char *editor = getenv("EDITOR");
    json_t *choices = memory_choices(r);
    size_t n = json_array_size(choices);
    json_decref(choices);
    if (editor && *editor && n == 1)
        term_printf(&r->out, TONE_DIM, "/memory edit  opens ./AGENTS.md in %s\n", editor);
    else if (editor && *editor)
        term_printf(&r->out, TONE_DIM, "/memory edit  lists the %zu files to open in %s "
                    "(/memory edit N opens file N)\n", n, editor);
    else
        term_printf(&r->out, TONE_DIM, "/memory edit  opens ./AGENTS.md in $EDITOR (not set); files "
                    "edited elsewhere apply from the next session\n");
}

bool slash_is_memory_line(const char *line)
{
    /* "#private …" is a message marked private (docs/memory.md), never a
     * note: a note would write it into AGENTS.md for good. */
    if (!strncmp(line, "#private", 8) && (line[8] == ' ' || line[8] == '\0'))
        return false;
    return line[0] == '#' && line[1] != '#' && line[1] != '!' && !strchr(line, '\n');
}

void slash_remember(slash_host *r, const char *text)
{
    loom_status st;
    if (loom_session_remember(r->session, text, &st) != 0) {
        term_printf(&r->out, TONE_YELLOW, "%s \xc2\xb7 # text adds \"- text\" to ./AGENTS.md\n",
                    st.message);
        return;
    }
    term_printf(&r->out, TONE_GREEN, "Remembered in ./AGENTS.md\n");
}
