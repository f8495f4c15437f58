/* fuzz_heartbeat_config.c — the heartbeat settings block (heartbeat/config.h)
 * from arbitrary JSON: a settings file or an agent profile is outside input.
 * Any bytes go through json_loadb, heartbeat_config_from_json and, when it
 * parses, heartbeat_config_to_json. Errors are fine; a crash, a leak or an
 * out-of-range value in a parsed config is not. */
#include <stdint.h>
#include <stdlib.h>

#include "heartbeat/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *block = json_loadb((const char *)data, size, JSON_DECODE_ANY, &jerr);
    if (!block)
        return 0;
    /* Parse the value as the "heartbeat" key of a settings file would hold
     * it, and, when it is an object holding "heartbeat", that key's value
     * too (so seeds written as whole settings files reach the parser). */
    const json_t *blocks[2] = {block, json_object_get(block, "heartbeat")};
    for (int b = 0; b < 2; b++) {
        if (b == 1 && !blocks[1])
            break;
        heartbeat_config cfg;
        loom_error err;
        loom_error_clear(&err);
        if (heartbeat_config_from_json(blocks[b], "/tmp", &cfg, &err) == 0) {
            /* What the parser accepted must be usable as it stands. */
            if (!(cfg.T_hb > 0) || !(cfg.T_hb_act > 0) || cfg.delta_hb < 0 ||
                cfg.delta_hb > 1 || cfg.novelty_window < 0)
                abort();
            for (size_t i = 0; i < cfg.n_sources; i++) {
                const watch_config *w = &cfg.sources[i];
                if (w->weight < 0 || w->weight > 1)
                    abort();
                if (w->type == WATCH_FILESYSTEM && (!w->n_paths || w->paths[0][0] != '/'))
                    abort();
                if (w->type == WATCH_PROCESS && (!w->pid_file || w->pid_file[0] != '/'))
                    abort();
                if (w->type == WATCH_RESOURCE && (!w->disk_path || w->disk_path[0] != '/'))
                    abort();
            }
            json_t *out = heartbeat_config_to_json(&cfg);
            if (!out)
                abort();
            json_decref(out);
        }
        heartbeat_config_free(&cfg);
    }
    json_decref(block);
    return 0;
}
