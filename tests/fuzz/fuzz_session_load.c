/* fuzz_session_load.c — libFuzzer target for loading a session file: any
 * bytes go through transcript_parse, both tree walks and the conversion to
 * wire messages. Loading must never crash, leak or hang, whatever the file
 * holds (torn lines, cycles, wrong types, duplicate ids, holes in the
 * chain and their repair); transcript_check runs both ways. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "session/history.h"
#include "session/transcript.h"

/* Walks from a few leaves besides the default one, so links from records
 * that are not the last one are followed too; bounded so a large input
 * stays linear. */
#define EXTRA_LEAVES 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    transcript *t = transcript_parse((const char *)data, size, "fuzz");
    json_t **chain = NULL;
    size_t n = 0;
    loom_error err;
    (void)transcript_check(t, false, &err);
    (void)transcript_check(t, true, &err);

    transcript_active(t, &chain, &n);
    msg_request req = {0};
    history_stats st;
    history_from_records(chain, n, &req, &st);
    msg_request_free(&req);
    free(chain);

    size_t count = transcript_count(t);
    for (size_t i = 0; i < count && i < EXTRA_LEAVES; i++) {
        const char *id = json_string_value(json_object_get(transcript_record(t, i), "id"));
        if (transcript_chain(t, id, i % 2 == 0, &chain, &n, NULL) == 0) {
            history_from_records(chain, n, &req, NULL);
            msg_request_free(&req);
            free(chain);
        }
    }
    for (size_t i = 0; i < transcript_n_warnings(t); i++)
        (void)transcript_warning(t, i);
    transcript_free(t);
    return 0;
}
