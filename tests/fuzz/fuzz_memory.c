/* fuzz_memory.c — the memory parsers of outside input (ext/memory/): an
 * entry file's frontmatter (memory_entry_parse: anyone with write access
 * to the repository writes them), the extractor's reply (memory_reply_parse:
 * model output) and the sanitizer recall puts every entry through.
 *
 * The first byte picks the target (mod 3), the rest is the input:
 *   0  memory_entry_parse; an entry that parses is rendered
 *      (memory_entry_render) and must parse again to the same name,
 *      description and type;
 *   1  memory_reply_parse; every op of an accepted reply must hold the
 *      shape the parser promises (caps, one-line fields, slug targets);
 *   2  memory_sanitize; the result must hold no tag opener: no "<" followed
 *      by blanks or "/" and then a letter, "!" or "?".
 * Errors are fine; a crash, a leak or a broken promise is not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext/memory/entry.h"
#include "ext/memory/reply.h"
#include "context/memory_sanitize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void entry_roundtrip(const char *text, size_t len)
{
    memory_entry e;
    loom_str why = LOOM_STR_INIT;
    if (memory_entry_parse(text, len, &e, &why) == 0) {
        e.slug = strdup("x");
        char *out = memory_entry_render(&e);
        memory_entry again;
        loom_str why2 = LOOM_STR_INIT;
        if (memory_entry_parse(out, strlen(out), &again, &why2) != 0 ||
            strcmp(again.name, e.name) || strcmp(again.description, e.description) ||
            (e.type && (!again.type || strcmp(again.type, e.type)))) {
            fprintf(stderr, "a rendered entry does not parse back: %s\n%s\n", str_cstr(&why2),
                    out);
            abort();
        }
        memory_entry_clear(&again);
        str_free(&why2);
        free(out);
        memory_entry_clear(&e);
    }
    str_free(&why);
}

static void reply_check(const char *text, size_t len)
{
    memory_reply r;
    loom_str why = LOOM_STR_INIT;
    if (memory_reply_parse(text, len, &r, &why) == 0) {
        if (r.n > MEMORY_REPLY_MAX_OPS)
            abort();
        for (size_t i = 0; i < r.n; i++) {
            const memory_op *op = &r.ops[i];
            if (op->target && !memory_slug_valid(op->target))
                abort();
            if (op->op != MEMORY_OP_MERGE &&
                (!op->name || !op->description || !op->type || !op->body))
                abort();
            if (op->name && (strlen(op->name) > MEMORY_NAME_MAX || strchr(op->name, '\n')))
                abort();
            if (op->body && strlen(op->body) > MEMORY_BODY_MAX)
                abort();
            if (op->type && !memory_type_valid(op->type))
                abort();
        }
        memory_reply_free(&r);
    } else if (r.n != 0 || r.ops) {
        abort();
    }
    str_free(&why);
}

static void sanitize_check(const char *text, size_t len)
{
    char *out = memory_sanitize(text, len, NULL);
    for (const char *p = out; *p; p++) {
        if (*p != '<')
            continue;
        const char *q = p + 1;
        while (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r' || *q == '/')
            q++;
        if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || *q == '!' || *q == '?') {
            fprintf(stderr, "a tag opener survived: %s\n", p);
            abort();
        }
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 70000)
        return 0;
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    switch (data[0] % 3) {
    case 0: entry_roundtrip(text, size - 1); break;
    case 1: reply_check(text, size - 1); break;
    default: sanitize_check(text, size - 1); break;
    }
    free(text);
    return 0;
}
