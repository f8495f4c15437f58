/* file_commit.c — backup, then atomic write, for the file-writing tools;
 * and the structuredPatch their results carry. Any thread (per call).
 * With a driver's port (tools/tool_io.h) the write goes to the driver; the
 * backup is still of the disk file, what rewind can restore. */
#include "tools/builtin/file_commit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/diff.h"
#include "base/fileio.h"
#include "heartbeat/heartbeat.h"
#include "session/file_history.h"
#include "tools/file_state.h"
#include "tools/tool_io.h"

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
    if (TOOL_IO_FILES(ctx->io)) {
        /* The driver's text is the file: it writes it (and makes its
         * folders); the read cache remembers the text, not a stat. */
        loom_str why = LOOM_STR_INIT;
        heartbeat_note_own_write(ctx->heartbeat, path, data, len);
        int rc = ctx->io->write_text(ctx->io->ctx, path, data, len, &why);
        if (rc != 0)
            tool_error(out, "Cannot write %s: %s", path, why.len ? why.ptr : "the client failed");
        else
            file_state_note_text(ctx->files, path, data, len);
        str_free(&why);
        return rc != 0 ? -1 : 0;
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

int file_driver_current(const tool_ctx *ctx, const char *tool, const char *path, bool *exists,
                        loom_str *text, loom_str *why)
{
    *exists = false;
    struct stat st;
    bool on_disk = stat(path, &st) == 0;
    if (on_disk && S_ISDIR(st.st_mode)) {
        str_printf(why, "%s is a directory; %s needs the path of a file.", path, tool);
        return 1;
    }
    if (on_disk && !S_ISREG(st.st_mode)) {
        str_printf(why, "%s is not a regular file (a device, pipe or socket); %s only changes "
                        "files.", path, tool);
        return 1;
    }
    /* The path stays as the model gave it (resolved, not realpath'd): the
     * driver names its buffers as Read asked for them; the read cache
     * canonicalizes its keys itself. */
    if (!file_state_known(ctx->files, path)) {
        if (!on_disk)
            return 0; /* a new file */
        str_puts(why, FILE_STATE_NOT_READ);
        return 1;
    }
    if (!text) { /* validation: the client is asked only once the call is allowed */
        *exists = true;
        return 0;
    }
    loom_str fail = LOOM_STR_INIT;
    str_clear(text);
    if (ctx->io->read_text(ctx->io->ctx, path, text, &fail) != 0) {
        str_printf(why, "Cannot read %s to check it is unchanged: %s", path,
                   fail.len ? fail.ptr : "the client failed");
        str_free(&fail);
        return 1;
    }
    str_free(&fail);
    if (file_state_check_text(ctx->files, path, text->ptr ? text->ptr : "", text->len, why) != 0)
        return 1;
    *exists = true;
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
