/* artifacts.c — the artifacts a run leaves behind (artifacts.h): patch.diff,
 * conclusion.md, result.json, report.md and summary.json, built from the
 * Run object, loom's result, the patch and the run's events.
 *
 * Owns nothing past a call: the list it fills belongs to the caller
 * (artifact_list_free). Inputs are untrusted text: JSON that does not parse
 * (or is not an object / array) is taken as absent, never a crash.
 *
 * Threading: pure, no state, no I/O; any thread. */
#include "surfaces/server/runs/artifacts.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/str.h"

/* What the events say, gathered once for the report and the summary. */
typedef struct run_facts {
    json_t *tools;          /* [{call_id, tool, outcome}] in start order */
    json_t *approvals;      /* [{approval_id, tool, question, status, actor, comment}] */
    json_t *files;          /* [path] from the patch */
    long tool_calls, tool_failures, n_approvals;
    long files_changed, added, removed;
} run_facts;

static json_t *parse_kind(const char *text, json_type type)
{
    if (!text || !*text)
        return NULL;
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (v && json_typeof(v) != type) {
        json_decref(v);
        return NULL;
    }
    return v;
}

static const char *str_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* An event's payload: the server's Event object carries it under
 * "payload"; a bare loom event is its own payload. */
static const json_t *payload_of(const json_t *ev)
{
    const json_t *p = json_object_get(ev, "payload");
    return json_is_object(p) ? p : ev;
}

static json_t *find_by(json_t *arr, const char *key, const char *value)
{
    size_t i;
    json_t *v;
    if (!value)
        return NULL;
    json_array_foreach(arr, i, v) {
        const char *s = str_of(v, key);
        if (s && strcmp(s, value) == 0)
            return v;
    }
    return NULL;
}

static void gather_events(const json_t *events, run_facts *f)
{
    size_t i;
    const json_t *ev;
    json_array_foreach(events, i, ev) {
        const char *type = str_of(ev, "type");
        if (!type)
            continue;
        const json_t *p = payload_of(ev);
        const char *call = str_of(p, "call_id");
        const char *tool = str_of(p, "tool");
        if (strcmp(type, "tool.started") == 0) {
            f->tool_calls++;
            json_array_append_new(f->tools, json_pack("{s:s?, s:s, s:s}", "call_id", call,
                                                      "tool", tool ? tool : "?", "outcome",
                                                      "did not finish"));
        } else if (strcmp(type, "tool.finished") == 0 || strcmp(type, "tool.failed") == 0) {
            bool failed = strcmp(type, "tool.failed") == 0 ||
                          json_is_true(json_object_get(p, "is_error"));
            json_t *t = find_by(f->tools, "call_id", call);
            if (!t) { /* a finish without its start (a cut event list) */
                f->tool_calls++;
                t = json_pack("{s:s?, s:s, s:s}", "call_id", call, "tool", tool ? tool : "?",
                              "outcome", "did not finish");
                json_array_append_new(f->tools, t);
            }
            const char *was = str_of(t, "outcome");
            if (failed && !(was && strcmp(was, "failed") == 0))
                f->tool_failures++;
            if (failed || !(was && strcmp(was, "failed") == 0))
                json_object_set_new(t, "outcome", json_string(failed ? "failed" : "ok"));
        } else if (strcmp(type, "approval.requested") == 0) {
            f->n_approvals++;
            json_array_append_new(
                f->approvals,
                json_pack("{s:s?, s:s?, s:s?, s:s}", "approval_id", str_of(p, "approval_id"),
                          "tool", tool, "question", str_of(p, "question"), "status", "pending"));
        } else if (strcmp(type, "approval.resolved") == 0) {
            json_t *a = find_by(f->approvals, "approval_id", str_of(p, "approval_id"));
            if (!a) {
                f->n_approvals++;
                a = json_pack("{s:s?, s:s?, s:s}", "approval_id", str_of(p, "approval_id"),
                              "tool", tool, "status", "pending");
                json_array_append_new(f->approvals, a);
            }
            const char *status = str_of(p, "status");
            if (!status)
                status = json_is_true(json_object_get(p, "approved")) ? "approved" : "rejected";
            json_object_set_new(a, "status", json_string(status));
            const char *actor = str_of(p, "actor_id");
            if (!actor)
                actor = str_of(p, "actor");
            if (actor)
                json_object_set_new(a, "actor", json_string(actor));
            const char *comment = str_of(p, "comment");
            if (!comment)
                comment = str_of(p, "reason");
            if (comment)
                json_object_set_new(a, "comment", json_string(comment));
        }
    }
}

/* Files and +/- lines of a unified diff (git's: "diff --git a/X b/Y"; a
 * plain diff: "+++ Y"). */
static void gather_patch(const char *patch, run_facts *f)
{
    bool git = strstr(patch, "diff --git ") != NULL;
    for (const char *line = patch; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char *path = NULL;
        if (git && len > 11 && strncmp(line, "diff --git ", 11) == 0) {
            const char *b = NULL;
            for (const char *q = line; q + 3 <= line + len; q++)
                if (strncmp(q, " b/", 3) == 0)
                    b = q + 3;
            path = b ? xstrndup(b, (size_t)(line + len - b)) : xstrndup(line + 11, len - 11);
        } else if (len >= 4 && strncmp(line, "+++ ", 4) == 0) {
            if (!git) {
                const char *p = line + 4;
                size_t pl = len - 4;
                const char *tab = memchr(p, '\t', pl);
                if (tab)
                    pl = (size_t)(tab - p);
                if (pl > 2 && strncmp(p, "b/", 2) == 0)
                    p += 2, pl -= 2;
                path = xstrndup(p, pl);
            }
        } else if (len >= 4 && strncmp(line, "--- ", 4) == 0) {
            /* a file header, not a removed line */
        } else if (len >= 1 && line[0] == '+') {
            f->added++;
        } else if (len >= 1 && line[0] == '-') {
            f->removed++;
        }
        if (path) {
            f->files_changed++;
            json_array_append_new(f->files, json_string(path));
            free(path);
        }
        line = nl ? nl + 1 : NULL;
    }
}

/* Text for one line of markdown: newlines become spaces. */
static void put_inline(loom_str *out, const char *s)
{
    for (; s && *s; s++)
        str_putc(out, *s == '\n' || *s == '\r' ? ' ' : *s);
}

static json_t *usage_of(const json_t *run, const json_t *result)
{
    json_t *u = json_object_get(run, "usage");
    if (!json_is_object(u))
        u = json_object_get(result, "usage");
    if (json_is_object(u))
        return json_deep_copy(u);
    return json_pack("{s:i, s:i}", "input_tokens", 0, "output_tokens", 0);
}

static const char *field(const json_t *run, const json_t *result, const char *key)
{
    const char *s = str_of(run, key);
    return s ? s : str_of(result, key);
}

static char *report_md(const char *run_id, const json_t *run, const json_t *result,
                       const run_facts *f)
{
    loom_str o = LOOM_STR_INIT;
    str_puts(&o, "# Run ");
    put_inline(&o, run_id);
    str_puts(&o, "\n\n**Goal:** ");
    put_inline(&o, str_of(run, "goal") ? str_of(run, "goal") : "(none)");
    str_puts(&o, "\n\n**State:** ");
    put_inline(&o, field(run, result, "state") ? field(run, result, "state") : "unknown");
    str_puts(&o, "\n\n**Stop reason:** ");
    put_inline(&o, field(run, result, "stop_reason") ? field(run, result, "stop_reason")
                                                     : "none");
    str_puts(&o, "\n\n## Tools run\n\n");
    size_t i;
    json_t *v;
    if (json_array_size(f->tools) == 0)
        str_puts(&o, "None.\n");
    json_array_foreach(f->tools, i, v) {
        str_printf(&o, "%zu. ", i + 1);
        put_inline(&o, str_of(v, "tool"));
        str_puts(&o, " — ");
        put_inline(&o, str_of(v, "outcome"));
        str_putc(&o, '\n');
    }
    str_puts(&o, "\n## Approvals\n\n");
    if (json_array_size(f->approvals) == 0)
        str_puts(&o, "None.\n");
    json_array_foreach(f->approvals, i, v) {
        str_puts(&o, "- ");
        put_inline(&o, str_of(v, "approval_id") ? str_of(v, "approval_id") : "approval");
        if (str_of(v, "tool")) {
            str_puts(&o, " (");
            put_inline(&o, str_of(v, "tool"));
            str_puts(&o, ")");
        }
        str_puts(&o, ": ");
        put_inline(&o, str_of(v, "status"));
        if (str_of(v, "actor")) {
            str_puts(&o, " by ");
            put_inline(&o, str_of(v, "actor"));
        }
        if (str_of(v, "comment")) {
            str_puts(&o, " — ");
            put_inline(&o, str_of(v, "comment"));
        }
        str_putc(&o, '\n');
    }
    str_puts(&o, "\n## Files changed\n\n");
    if (json_array_size(f->files) == 0)
        str_puts(&o, "None.\n");
    json_array_foreach(f->files, i, v) {
        str_puts(&o, "- ");
        put_inline(&o, json_string_value(v));
        str_putc(&o, '\n');
    }
    if (f->files_changed)
        str_printf(&o, "\n+%ld -%ld lines\n", f->added, f->removed);
    json_t *u = usage_of(run, result);
    json_int_t in = json_integer_value(json_object_get(u, "input_tokens"));
    json_int_t out = json_integer_value(json_object_get(u, "output_tokens"));
    json_decref(u);
    str_printf(&o, "\n## Usage\n\n- input tokens: %lld\n- output tokens: %lld\n",
               (long long)in, (long long)out);
    json_int_t turns = json_integer_value(json_object_get(result, "num_turns"));
    str_printf(&o, "- turns: %lld\n- tool calls: %ld (%ld failed)\n", (long long)turns,
               f->tool_calls, f->tool_failures);
    return str_steal(&o);
}

/* Milliseconds since the epoch of "YYYY-MM-DDTHH:MM:SS(.mmm)Z", or -1. */
static long long iso_ms(const char *s)
{
    struct tm tm = {0};
    int ms = 0;
    if (!s)
        return -1;
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return -1;
    if (*rest == '.') {
        int digits = 0;
        for (rest++; *rest >= '0' && *rest <= '9'; rest++, digits++)
            if (digits < 3)
                ms = ms * 10 + (*rest - '0');
        for (; digits < 3; digits++)
            ms *= 10;
    }
    if (*rest != 'Z')
        return -1;
    return (long long)timegm(&tm) * 1000 + ms;
}

static char *summary_json(const char *run_id, const json_t *run, const json_t *result,
                          const run_facts *f, const char *const *names, size_t n_names)
{
    const char *started = str_of(run, "started_at"), *ended = str_of(run, "ended_at");
    long long a = iso_ms(started), b = iso_ms(ended);
    json_t *names_arr = json_array();
    for (size_t i = 0; i < n_names; i++)
        json_array_append_new(names_arr, json_string(names[i]));
    json_t *turns = json_object_get(result, "num_turns");
    turns = json_is_integer(turns) ? json_incref(turns) : json_integer(0);
    json_t *o = json_pack(
        "{s:s, s:s?, s:s?, s:s?, s:s?, s:o, s:o, s:I, s:I, s:I, s:o, s:o}", "run_id", run_id,
        "state", field(run, result, "state"), "stop_reason", field(run, result, "stop_reason"),
        "started_at", started, "ended_at", ended, "duration_ms",
        a >= 0 && b >= a ? json_integer(b - a) : json_null(), "turns",
        turns, "tool_calls", (json_int_t)f->tool_calls,
        "tool_failures", (json_int_t)f->tool_failures, "approvals", (json_int_t)f->n_approvals,
        "usage", usage_of(run, result), "artifacts", names_arr);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

static void add_item(artifact_list *l, const char *name, const char *kind, const char *title,
                     const char *type, char *data)
{
    artifact_item *it = &l->items[l->n++];
    it->name = xstrdup(name);
    it->kind = xstrdup(kind);
    it->title = xstrdup(title);
    it->content_type = xstrdup(type);
    it->data = data ? data : xstrdup("");
    it->len = strlen(it->data);
}

int artifacts_build(const artifact_input *in, artifact_list *out)
{
    memset(out, 0, sizeof *out);
    if (!in)
        return 0;
    const char *run_id = in->run_id ? in->run_id : "";
    json_t *run = parse_kind(in->run_json, JSON_OBJECT);
    json_t *result = parse_kind(in->result_json, JSON_OBJECT);
    json_t *events = parse_kind(in->events_json, JSON_ARRAY);
    run_facts f = {.tools = json_array(), .approvals = json_array(), .files = json_array()};
    gather_events(events, &f);
    bool has_patch = in->patch && in->patch[0];
    if (has_patch)
        gather_patch(in->patch, &f);

    /* Which artifacts, in the header's order, and how many the cap keeps. */
    const char *names[5];
    size_t n = 0;
    if (has_patch)
        names[n++] = "patch.diff";
    names[n++] = "conclusion.md";
    names[n++] = "result.json";
    names[n++] = "report.md";
    names[n++] = "summary.json";
    size_t keep = in->max_artifacts < 0 ? 0 : (size_t)in->max_artifacts;
    if (keep > n)
        keep = n;
    out->dropped = n - keep;
    out->items = keep ? xcalloc(keep, sizeof *out->items) : NULL;

    for (size_t i = 0; i < keep; i++) {
        const char *name = names[i];
        if (strcmp(name, "patch.diff") == 0) {
            char title[128];
            snprintf(title, sizeof title, "Patch: %ld file%s changed, +%ld -%ld",
                     f.files_changed, f.files_changed == 1 ? "" : "s", f.added, f.removed);
            add_item(out, name, "patch", title, "text/x-diff", xstrdup(in->patch));
        } else if (strcmp(name, "conclusion.md") == 0) {
            const char *text = str_of(result, "result");
            if (!text)
                text = str_of(run, "summary");
            add_item(out, name, "text", "Conclusion", "text/markdown", xstrdup(text ? text : ""));
        } else if (strcmp(name, "result.json") == 0) {
            add_item(out, name, "json", "Result", "application/json",
                     xstrdup(result ? in->result_json : "{}"));
        } else if (strcmp(name, "report.md") == 0) {
            add_item(out, name, "report", "Report", "text/markdown",
                     report_md(run_id, run, result, &f));
        } else {
            add_item(out, name, "summary", "Summary", "application/json",
                     summary_json(run_id, run, result, &f, names, keep));
        }
    }
    json_decref(f.tools), json_decref(f.approvals), json_decref(f.files);
    json_decref(run), json_decref(result), json_decref(events);
    return 0;
}

void artifact_list_free(artifact_list *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        artifact_item *it = &l->items[i];
        free(it->name), free(it->kind), free(it->title), free(it->content_type), free(it->data);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}
