/* file_commit.c — backup, then atomic write, for the file-writing tools;
 * and the structuredPatch their results carry. Any thread (per call). */
#include "tools/builtin/file_commit.h"

#include <stdlib.h>
#include <string.h>

#include "base/diff.h"
#include "base/fileio.h"
#include "heartbeat/heartbeat.h"
#include "session/file_history.h"
#include "tools/file_state.h"

int file_commit(tool_ctx *ctx, const char *path, bool exists, const void *data, size_t len,
                int mode, tool_result *out)
{
    loom_error err;
    loom_error_clear(&err);
    json_t *snap = NULL;
    /* No backup, no write: a change that rewind cannot undo is refused. */
    if (file_history_track(ctx->history, path, ctx->message_id, &snap, &err) != 0) {
        tool_error(out, "%s was not changed: it could not be backed up first (%s). Set "
                        "LOOM_DISABLE_FILE_CHECKPOINTING=1 to write without backups.",
                   path, err.message);
        return -1;
    }
    if (snap) {
        if (ctx->record)
            ctx->record(ctx->record_ctx, snap);
        else
            json_decref(snap);
    }
    if (!exists) {
        char *dir = xstrdup(path);
        char *slash = strrchr(dir, '/');
        int rc = 0;
        if (slash && slash != dir) {
            *slash = '\0';
            rc = file_mkdirs(dir, 0777, &err);
        }
        free(dir);
        if (rc != 0) {
            tool_error(out, "Cannot create %s: %s", path, err.message);
            return -1;
        }
    }
    /* Told before the write: a heartbeat tick between the write and a later
     * notice would report the agent's own change as the world's. */
    heartbeat_note_own_write(ctx->heartbeat, path, data, len);
    if (file_state_write(ctx->files, path, data, len, mode, &err) != 0) {
        tool_error(out, "Cannot write %s: %s", path, err.message);
        return -1;
    }
    return 0;
}

void tool_raw_patch(json_t *raw, const char *before, size_t before_len, const char *after,
                    size_t after_len)
{
    /* A file this big is not diffed: the diff would cost more than the write. */
    if (!raw || before_len > TOOL_PATCH_MAX_FILE || after_len > TOOL_PATCH_MAX_FILE)
        return;
    diff_result d;
    diff_texts(before, before ? before_len : 0, after, after_len, 3, &d);
    json_t *patch = diff_structured_patch(&d, TOOL_PATCH_MAX_LINES);
    if (patch)
        json_object_set_new(raw, "structuredPatch", patch);
    diff_result_free(&d);
}
