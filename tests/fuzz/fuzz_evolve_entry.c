/* fuzz_evolve_entry.c — libFuzzer target for the M_f readers of
 * ext/evolve/ (docs/evolve.md): a pattern or failure file's frontmatter
 * (mf_entry_parse) and the JSONL ledgers (evolve_jsonl_parse: the
 * constraint hits, recall, runs and review files). Whatever the bytes, no
 * crash or leak; a parsed entry has every field, a kind of pattern or
 * failure, seen >= 1, a one-line description, and renders to a text that
 * parses back to the same fields (the format is a contract with the memory
 * recall); a parse error names the file; every ledger row is an object.
 * Any disagreement aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ext/evolve/evolve.h"
#include "ext/evolve/evolve_internal.h"

static void same_or_abort(const char *a, const char *b)
{
    if (!a || !b || strcmp(a, b) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';

    mf_entry e;
    loom_error err;
    loom_error_clear(&err);
    if (mf_entry_parse(text, "/f/mf/patterns/x.md", &e, &err) == 0) {
        if (!e.name[0] || !e.description[0] || strchr(e.description, '\n') || e.seen < 1 ||
            !e.sessions || !e.body || (strcmp(e.kind, "pattern") && strcmp(e.kind, "failure")))
            abort();
        char *again = mf_entry_render(&e);
        mf_entry r;
        if (mf_entry_parse(again, "/f/again.md", &r, &err) != 0)
            abort();
        same_or_abort(e.name, r.name);
        same_or_abort(e.description, r.description);
        same_or_abort(e.kind, r.kind);
        same_or_abort(e.signature, r.signature);
        same_or_abort(e.first_seen, r.first_seen);
        same_or_abort(e.last_seen, r.last_seen);
        if (e.seen != r.seen)
            abort();
        size_t i = 0;
        for (; e.sessions[i]; i++)
            same_or_abort(e.sessions[i], r.sessions[i]);
        if (r.sessions[i])
            abort();
        mf_entry_free(&r);
        free(again);
        mf_entry_free(&e);
    } else if (strncmp(err.message, "/f/mf/patterns/x.md: ", 21) != 0) {
        abort();
    }

    size_t bad = 0;
    json_t *rows = evolve_jsonl_parse(text, size, &bad);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) {
        if (!json_is_object(row))
            abort();
    }
    json_decref(rows);
    free(text);
    return 0;
}
