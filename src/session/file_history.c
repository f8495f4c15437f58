/* file_history.c — backups before writes, snapshot records, rewind (see
 * file_history.h for the model and the record shape).
 *
 * State is two lists: the messages ("points") in the order they first took
 * a backup, and per tracked file its backups, each remembering the point
 * that took it. That is all rewind needs: for a cut at point k, a file's
 * state before k is its backup with the smallest point >= k.
 */
#include "session/file_history.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/settings.h"
#include "base/uuid.h"
#include "session/record.h"

typedef struct fh_version {
    int version;
    bool existed;
    char *backup;        /* backupFileName; NULL when !existed */
    char *backup_time;   /* ISO 8601 */
    size_t point;        /* index into points: the message that took it */
} fh_version;

typedef struct fh_file {
    char *path;
    fh_version *v;
    size_t nv, cap;
    int next_version;    /* only grows, even across rewinds, so names stay unique */
} fh_file;

struct file_history {
    pthread_mutex_t lock;
    char *dir;
    bool disabled;
    char **points;
    size_t npoints, cap_points;
    fh_file *files;      /* few per session: a linear list is enough */
    size_t nfiles, cap_files;
};

static bool env_truthy(const char *name)
{
    const char *v = getenv(name);
    return v && (strcmp(v, "1") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
                 strcasecmp(v, "on") == 0);
}

file_history *file_history_new(const char *session_id)
{
    file_history *fh = xcalloc(1, sizeof *fh);
    pthread_mutex_init(&fh->lock, NULL);
    char *home = loom_home();
    loom_str d = LOOM_STR_INIT;
    str_printf(&d, "%s/file-history/%s", home,
               session_id && *session_id ? session_id : "unknown-session");
    free(home);
    fh->dir = str_steal(&d);
    /* The opt-out name follows the seed's CODEBUDDY_CODE_DISABLE_FILE_CHECKPOINTING. */
    fh->disabled = env_truthy("LOOM_DISABLE_FILE_CHECKPOINTING");
    return fh;
}

static void free_version(fh_version *v)
{
    free(v->backup);
    free(v->backup_time);
}

static void clear_locked(file_history *fh)
{
    for (size_t i = 0; i < fh->npoints; i++)
        free(fh->points[i]);
    fh->npoints = 0;
    for (size_t i = 0; i < fh->nfiles; i++) {
        for (size_t j = 0; j < fh->files[i].nv; j++)
            free_version(&fh->files[i].v[j]);
        free(fh->files[i].v);
        free(fh->files[i].path);
    }
    fh->nfiles = 0;
}

void file_history_free(file_history *fh)
{
    if (!fh)
        return;
    clear_locked(fh);
    free(fh->points);
    free(fh->files);
    free(fh->dir);
    pthread_mutex_destroy(&fh->lock);
    free(fh);
}

bool file_history_enabled(const file_history *fh)
{
    return fh && !fh->disabled;
}

const char *file_history_dir(const file_history *fh)
{
    return fh ? fh->dir : NULL;
}

/* ---- lookups (caller holds the lock) ---------------------------------- */

static size_t find_point(const file_history *fh, const char *id)
{
    for (size_t i = 0; i < fh->npoints; i++)
        if (strcmp(fh->points[i], id) == 0)
            return i;
    return SIZE_MAX;
}

static size_t add_point(file_history *fh, const char *id)
{
    if (fh->npoints == fh->cap_points) {
        fh->cap_points = fh->cap_points ? fh->cap_points * 2 : 8;
        fh->points = xrealloc(fh->points, fh->cap_points * sizeof *fh->points);
    }
    fh->points[fh->npoints] = xstrdup(id);
    return fh->npoints++;
}

static fh_file *find_file(file_history *fh, const char *path)
{
    for (size_t i = 0; i < fh->nfiles; i++)
        if (strcmp(fh->files[i].path, path) == 0)
            return &fh->files[i];
    return NULL;
}

static fh_file *add_file(file_history *fh, const char *path)
{
    if (fh->nfiles == fh->cap_files) {
        fh->cap_files = fh->cap_files ? fh->cap_files * 2 : 8;
        fh->files = xrealloc(fh->files, fh->cap_files * sizeof *fh->files);
    }
    fh_file *f = &fh->files[fh->nfiles++];
    memset(f, 0, sizeof *f);
    f->path = xstrdup(path);
    f->next_version = 1;
    return f;
}

static fh_version *add_version(fh_file *f)
{
    if (f->nv == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 4;
        f->v = xrealloc(f->v, f->cap * sizeof *f->v);
    }
    fh_version *v = &f->v[f->nv++];
    memset(v, 0, sizeof *v);
    return v;
}

static const fh_version *newest(const fh_file *f)
{
    const fh_version *best = NULL;
    for (size_t i = 0; i < f->nv; i++)
        if (!best || f->v[i].version > best->version)
            best = &f->v[i];
    return best;
}

/* The file's backup with the smallest point >= cut (the state before the
 * cut), or NULL when the file was not written at or after it. */
static const fh_version *state_before(const fh_file *f, size_t cut)
{
    const fh_version *best = NULL;
    for (size_t i = 0; i < f->nv; i++) {
        const fh_version *v = &f->v[i];
        if (v->point < cut)
            continue;
        if (!best || v->point < best->point ||
            (v->point == best->point && v->version < best->version))
            best = v;
    }
    return best;
}

/* Where a rewind to message_id cuts the list of points: the point itself
 * when it took a backup, else (for a UUIDv7, which sorts by time) the first
 * later point. SIZE_MAX when the id cannot be placed. */
static size_t place(const file_history *fh, const char *message_id)
{
    size_t i = find_point(fh, message_id);
    if (i != SIZE_MAX)
        return i;
    if (!uuid_valid(message_id))
        return fh->npoints == 0 ? 0 : SIZE_MAX;
    for (i = 0; i < fh->npoints; i++)
        if (uuid_valid(fh->points[i]) && strcasecmp(fh->points[i], message_id) > 0)
            return i;
    return fh->npoints;
}

/* ---- backups ------------------------------------------------------------ */

static void backup_name(const char *path, int version, loom_str *out)
{
    str_clear(out);
    str_printf(out, "%016llx@v%d",
               (unsigned long long)hash_fnv1a64(HASH_FNV1A64_SEED, path, strlen(path)),
               version);
}

/* Copies src (regular, st as stat'd) into dir as "<name_hash>@v<N>" with
 * the first N >= *version that is free, so a backup is whole or absent and
 * never replaces another: the copy goes to a temp file that is then
 * link()ed to its name, and link fails with EEXIST where rename would
 * overwrite (a name taken by an abandoned branch, an earlier run, or a
 * concurrent writer). *version and name get what was used. The backup keeps
 * the file's permission bits (plus owner read/write, to read it back) so a
 * restore of a deleted file can give them back; the directory is 0700. */
static int copy_to_backup(const char *src, const struct stat *st, const char *dir,
                          int *version, loom_str *name, loom_error *err)
{
    loom_str tmp = LOOM_STR_INIT, dst = LOOM_STR_INIT;
    static atomic_uint seq;
    str_printf(&tmp, "%s/.backup.tmp.%ld.%u", dir, (long)getpid(), atomic_fetch_add(&seq, 1));
    int in = -1, out = -1, rc = 0;
    const char *step = "opening";
    in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        goto fail;
    step = "creating the backup of";
    out = open(tmp.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0)
        goto fail;
    if (fchmod(out, (st->st_mode & 0777) | 0600) < 0)
        goto fail;
    char buf[65536];
    for (;;) {
        step = "reading";
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto fail;
        if (n == 0)
            break;
        step = "writing the backup of";
        if (file_write_full(out, buf, (size_t)n) < 0)
            goto fail;
    }
    step = "syncing the backup of";
    if (fsync(out) < 0)
        goto fail;
    int c = close(out);
    out = -1;
    if (c < 0)
        goto fail;
    step = "naming the backup of";
    for (;; (*version)++) {
        backup_name(src, *version, name);
        str_clear(&dst);
        str_printf(&dst, "%s/%s", dir, name->ptr);
        if (link(tmp.ptr, dst.ptr) == 0)
            break;
        if (errno != EEXIST)
            goto fail;
    }
    unlink(tmp.ptr);
    close(in);
    str_free(&tmp);
    str_free(&dst);
    return 0;
fail:;
    int e = errno;
    rc = loom_error_set(err, LOOM_ERR_IO, "file history: %s %s: %s", step, src, strerror(e));
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
    unlink(tmp.ptr);
    str_free(&tmp);
    str_free(&dst);
    return rc;
}

static json_t *entry_json(const fh_version *v)
{
    json_t *e = json_object();
    json_object_set_new(e, "backupFileName", v->backup ? json_string(v->backup) : json_null());
    json_object_set_new(e, "version", json_integer(v->version));
    json_object_set_new(e, "backupTime", json_string(v->backup_time));
    json_object_set_new(e, "existedAtTrack", json_boolean(v->existed));
    return e;
}

/* The cumulative snapshot: every tracked file with its newest backup. */
static json_t *snapshot_record(const file_history *fh, const char *message_id, bool update)
{
    json_t *rec = record_new(RECORD_FILE_HISTORY_SNAPSHOT);
    json_set_str(rec, "messageId", message_id);
    json_object_set_new(rec, "isSnapshotUpdate", json_boolean(update));
    json_t *snap = json_object();
    json_set_str(snap, "messageId", message_id);
    json_t *tracked = json_object();
    for (size_t i = 0; i < fh->nfiles; i++) {
        const fh_version *v = newest(&fh->files[i]);
        if (v)
            json_object_set_new(tracked, fh->files[i].path, entry_json(v));
    }
    json_object_set_new(snap, "trackedFileBackups", tracked);
    json_object_set_new(rec, "snapshot", snap);
    return rec;
}

/* Three steps so the lock is never held across file I/O (DESIGN §5):
 * decide under the lock, copy without it, then record under it again,
 * looking everything up afresh because the lists may have moved. */
int file_history_track(file_history *fh, const char *abs_path, const char *message_id,
                       json_t **snapshot, loom_error *err)
{
    *snapshot = NULL;
    if (!fh || fh->disabled || !message_id || !*message_id)
        return 0;

    pthread_mutex_lock(&fh->lock);
    bool done = false;
    size_t point = find_point(fh, message_id);
    fh_file *f = find_file(fh, abs_path);
    for (size_t i = 0; point != SIZE_MAX && f && i < f->nv && !done; i++)
        done = f->v[i].point == point;   /* backed up before this message's first write */
    int version = f ? f->next_version : 1;
    pthread_mutex_unlock(&fh->lock);
    if (done)
        return 0;

    struct stat st;
    bool existed = stat(abs_path, &st) == 0;
    if (!existed && errno != ENOENT) {
        int e = errno;
        return loom_error_set(err, LOOM_ERR_IO, "file history: cannot stat %s: %s", abs_path,
                              strerror(e));
    }
    if (existed && !S_ISREG(st.st_mode))
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "file history: %s is not a regular file", abs_path);
    loom_str name = LOOM_STR_INIT;
    if (existed) {
        int rc = file_mkdirs(fh->dir, 0700, err);
        if (rc == 0)
            rc = copy_to_backup(abs_path, &st, fh->dir, &version, &name, err);
        if (rc != 0) {
            str_free(&name);
            return rc;
        }
    }
    char iso[32];
    clock_iso8601(clock_wall_ms(), iso);

    pthread_mutex_lock(&fh->lock);
    point = find_point(fh, message_id);
    f = find_file(fh, abs_path);
    done = false;
    for (size_t i = 0; point != SIZE_MAX && f && i < f->nv && !done; i++)
        done = f->v[i].point == point;
    if (done) {
        /* Another writer of this message got there first; its backup is the
         * one that holds the state before the message. */
        pthread_mutex_unlock(&fh->lock);
        if (existed) {
            loom_str p = LOOM_STR_INIT;
            str_printf(&p, "%s/%s", fh->dir, name.ptr);
            unlink(p.ptr);
            str_free(&p);
        }
        str_free(&name);
        return 0;
    }
    bool update = point != SIZE_MAX;
    if (!update)
        point = add_point(fh, message_id);
    if (!f)
        f = add_file(fh, abs_path);
    fh_version *v = add_version(f);
    v->version = version;
    v->existed = existed;
    v->backup = existed ? str_steal(&name) : NULL;
    v->backup_time = xstrdup(iso);
    v->point = point;
    if (f->next_version <= version)
        f->next_version = version + 1;
    *snapshot = snapshot_record(fh, message_id, update);
    pthread_mutex_unlock(&fh->lock);
    str_free(&name);
    return 0;
}

/* ---- loading -------------------------------------------------------------- */

size_t file_history_load(file_history *fh, json_t *const *records, size_t n)
{
    if (!fh)
        return 0;
    pthread_mutex_lock(&fh->lock);
    clear_locked(fh);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *rec = records[i];
        const char *type = json_get_str(rec, "type", NULL);
        if (!type || strcmp(type, RECORD_FILE_HISTORY_SNAPSHOT) != 0)
            continue;
        json_t *snap = json_get_obj(rec, "snapshot");
        const char *mid = json_get_str(rec, "messageId", json_get_str(snap, "messageId", NULL));
        json_t *tracked = json_get_obj(snap, "trackedFileBackups");
        if (!mid || !*mid || !tracked)
            continue;
        used++;
        size_t point = find_point(fh, mid);
        if (point == SIZE_MAX)
            point = add_point(fh, mid);
        const char *path;
        json_t *e;
        json_object_foreach(tracked, path, e) {
            /* Relative keys (another harness's sessions) have no anchor here. */
            if (path[0] != '/' || !json_is_object(e))
                continue;
            int64_t version = json_get_int(e, "version", 0);
            const char *backup = json_get_str(e, "backupFileName", NULL);
            bool existed = json_get_bool(e, "existedAtTrack", backup != NULL);
            if (version < 1 || version > INT32_MAX || (existed && !backup) ||
                (backup && (strchr(backup, '/') || strcmp(backup, "..") == 0)))
                continue;   /* never let a record point a restore outside the dir */
            fh_file *f = find_file(fh, path);
            if (!f)
                f = add_file(fh, path);
            bool known = false;
            for (size_t j = 0; j < f->nv && !known; j++)
                known = f->v[j].version == (int)version;
            if (known)
                continue;   /* a cumulative snapshot repeating an older backup */
            fh_version *v = add_version(f);
            v->version = (int)version;
            v->existed = existed;
            v->backup = existed ? xstrdup(backup) : NULL;
            v->backup_time = xstrdup(json_get_str(e, "backupTime", ""));
            v->point = point;
            if (f->next_version <= (int)version)
                f->next_version = (int)version + 1;
        }
    }
    pthread_mutex_unlock(&fh->lock);
    return used;
}

/* ---- rewind -------------------------------------------------------------- */

json_t *file_history_changed_since(file_history *fh, const char *message_id)
{
    json_t *out = json_array();
    if (!fh || !message_id)
        return out;
    pthread_mutex_lock(&fh->lock);
    size_t cut = place(fh, message_id);
    for (size_t i = 0; cut != SIZE_MAX && i < fh->nfiles; i++) {
        const fh_version *v = state_before(&fh->files[i], cut);
        if (!v)
            continue;
        json_t *o = json_pack("{s:s,s:b}", "path", fh->files[i].path, "existed", v->existed);
        if (v->existed && v->backup) {
            loom_str b = LOOM_STR_INIT;
            str_printf(&b, "%s/%s", fh->dir, v->backup);
            json_object_set_new(o, "backup", json_string(b.ptr));
            str_free(&b);
        }
        json_array_append_new(out, o);
    }
    pthread_mutex_unlock(&fh->lock);
    return out;
}

bool file_history_has_changes(file_history *fh, const char *message_id)
{
    if (!fh || !message_id)
        return false;
    pthread_mutex_lock(&fh->lock);
    size_t cut = place(fh, message_id);
    bool any = false;
    for (size_t i = 0; cut != SIZE_MAX && i < fh->nfiles && !any; i++)
        any = state_before(&fh->files[i], cut) != NULL;
    pthread_mutex_unlock(&fh->lock);
    return any;
}

/* Puts one file back as v says. Appends a line to report; 0 or -code. */
static int restore_one(const file_history *fh, const char *path, const fh_version *v,
                       loom_str *report, loom_error *err)
{
    struct stat cur;
    bool exists = stat(path, &cur) == 0;
    if (exists && !S_ISREG(cur.st_mode))
        return loom_error_set(err, LOOM_ERR_IO,
                              "cannot restore %s: it is no longer a regular file", path);
    if (!v->existed) {
        if (!exists) {
            str_printf(report, "  unchanged %s (still absent)\n", path);
            return 0;
        }
        if (unlink(path) != 0) {
            int e = errno;
            return loom_error_set(err, LOOM_ERR_IO, "cannot delete %s: %s", path, strerror(e));
        }
        str_printf(report, "  deleted %s (it did not exist before)\n", path);
        return 0;
    }

    loom_str bpath = LOOM_STR_INIT;
    str_printf(&bpath, "%s/%s", fh->dir, v->backup);
    char *data = NULL, *now = NULL;
    size_t len = 0, now_len = 0;
    struct stat bst;
    int rc = file_read_all(bpath.ptr, &data, &len, err);
    if (rc == 0 && stat(bpath.ptr, &bst) != 0)
        bst.st_mode = 0644;
    if (rc != 0) {
        loom_error_prefix(err, "cannot restore %s from backup v%d: ", path, v->version);
        goto done;
    }
    if (exists && file_read_all(path, &now, &now_len, NULL) == 0 && now_len == len &&
        memcmp(now, data, len) == 0) {
        str_printf(report, "  unchanged %s\n", path);
        goto done;
    }
    if (!exists) {
        /* The directory may have gone with the file. */
        char *dir = xstrdup(path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            rc = file_mkdirs(dir, 0777, err);
        }
        free(dir);
        if (rc != 0)
            goto done;
    }
    int mode = (int)((exists ? cur.st_mode : bst.st_mode) & 07777);
    rc = file_replace(path, data, len, mode, NULL, err);
    if (rc == 0)
        str_printf(report, "  restored %s (backup v%d)\n", path, v->version);
done:
    free(data);
    free(now);
    str_free(&bpath);
    return rc;
}

/* One file to put back, copied out of the lists so the restore can run
 * without the lock. */
typedef struct restore_job {
    char *path;
    fh_version v;
} restore_job;

int file_history_rewind(file_history *fh, const char *message_id, loom_str *report,
                        loom_error *err)
{
    if (!fh || !message_id || !*message_id)
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST, "rewind: no message id given");

    pthread_mutex_lock(&fh->lock);
    size_t cut = place(fh, message_id);
    if (cut == SIZE_MAX) {
        pthread_mutex_unlock(&fh->lock);
        return loom_error_set(err, LOOM_ERR_INVALID_REQUEST,
                              "rewind: %s is not a message that changed files in this session",
                              message_id);
    }
    char *cut_id = cut < fh->npoints ? xstrdup(fh->points[cut]) : NULL;
    restore_job *jobs = xcalloc(fh->nfiles + 1, sizeof *jobs);
    size_t njobs = 0;
    for (size_t i = 0; i < fh->nfiles; i++) {
        const fh_version *v = state_before(&fh->files[i], cut);
        if (!v)
            continue;
        jobs[njobs].path = xstrdup(fh->files[i].path);
        jobs[njobs].v = *v;
        jobs[njobs].v.backup = xstrdup(v->backup);
        jobs[njobs].v.backup_time = NULL;
        njobs++;
    }
    pthread_mutex_unlock(&fh->lock);

    loom_str rep = LOOM_STR_INIT;
    int first_rc = 0;
    if (njobs == 0)
        str_printf(&rep, "No file changes to undo at or after message %s.\n", message_id);
    else
        str_printf(&rep, "Files rewound to their state before message %s:\n", message_id);
    for (size_t i = 0; i < njobs; i++) {
        loom_error one;
        loom_error_clear(&one);
        int rc = restore_one(fh, jobs[i].path, &jobs[i].v, &rep, &one);
        if (rc != 0) {
            str_printf(&rep, "  FAILED %s: %s\n", jobs[i].path, one.message);
            if (first_rc == 0) {
                first_rc = rc;
                if (err)
                    *err = one;
            }
        }
        free(jobs[i].path);
        free_version(&jobs[i].v);
    }
    free(jobs);

    if (first_rc == 0 && cut_id) {
        /* Forget the abandoned part: the points from the cut on and the
         * backups they took; a file left without backups is untracked. */
        pthread_mutex_lock(&fh->lock);
        cut = find_point(fh, cut_id);
        if (cut != SIZE_MAX) {
            for (size_t i = cut; i < fh->npoints; i++)
                free(fh->points[i]);
            fh->npoints = cut;
            size_t keep = 0;
            for (size_t i = 0; i < fh->nfiles; i++) {
                fh_file *f = &fh->files[i];
                size_t kv = 0;
                for (size_t j = 0; j < f->nv; j++) {
                    if (f->v[j].point >= cut)
                        free_version(&f->v[j]);
                    else
                        f->v[kv++] = f->v[j];
                }
                f->nv = kv;
                if (kv == 0) {
                    free(f->v);
                    free(f->path);
                } else {
                    fh->files[keep++] = *f;
                }
            }
            fh->nfiles = keep;
        }
        pthread_mutex_unlock(&fh->lock);
    }
    free(cut_id);
    if (report)
        str_append(report, rep.ptr, rep.len);
    str_free(&rep);
    return first_rc;
}
