/* test_tool_files.c — Read, Write and Edit called directly with a hand-built
 * tool_ctx, the read-before-write rules of the read cache, and the file
 * history: snapshot records before writes, rewind, rewind after reloading
 * the records. Every test gets a fresh temp directory (the cwd) and its own
 * LOOM_HOME. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/json.h"
#include "base/str.h"
#include "base/uuid.h"
#include "tools/builtin/builtin.h"
#include "session/file_history.h"
#include "tools/file_state.h"

/* ---- fixture ---------------------------------------------------------------- */

typedef struct fixture {
    char root[256];
    char *cwd;
    char *home;
    tool_ctx ctx;
    json_t *records;      /* what ctx.record received, in order */
    json_t *watch_seen;   /* the content of watch_path on disk at each record */
    char *watch_path;
} fixture;

static fixture *F;

static void collect(void *rc, json_t *rec)
{
    fixture *f = rc;
    json_array_append_new(f->records, rec);
    if (f->watch_path) {
        char *data = NULL;
        size_t len = 0;
        if (file_read_all(f->watch_path, &data, &len, NULL) == 0)
            json_array_append_new(f->watch_seen, json_stringn(data, len));
        else
            json_array_append_new(f->watch_seen, json_null());
        free(data);
    }
}

static char *join(const char *a, const char *b)
{
    loom_str s = LOOM_STR_INIT;
    str_printf(&s, "%s/%s", a, b);
    return str_steal(&s);
}

static int setup(void **state)
{
    F = xcalloc(1, sizeof *F);
    const char *base = getenv("TMPDIR");
    snprintf(F->root, sizeof F->root, "%s/loom-toolfiles-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(F->root))
        return -1;
    F->cwd = join(F->root, "work");
    F->home = join(F->root, "home");
    mkdir(F->cwd, 0755);
    setenv("LOOM_HOME", F->home, 1);
    unsetenv("LOOM_DISABLE_FILE_CHECKPOINTING");
    F->records = json_array();
    F->watch_seen = json_array();
    F->ctx.cwd = F->cwd;
    F->ctx.session_id = "sess-1";
    F->ctx.files = file_state_new();
    F->ctx.history = file_history_new("sess-1");
    F->ctx.message_id = "msg-1";
    F->ctx.record = collect;
    F->ctx.record_ctx = F;
    return 0;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static int teardown(void **state)
{
    nftw(F->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    file_state_free(F->ctx.files);
    file_history_free(F->ctx.history);
    json_decref(F->records);
    json_decref(F->watch_seen);
    free(F->watch_path);
    free(F->cwd);
    free(F->home);
    free(F);
    F = NULL;
    return 0;
}

/* ---- helpers ---------------------------------------------------------------- */

static char *path_of(const char *name)
{
    return join(F->cwd, name);
}

static void put(const char *name, const void *data, size_t len)
{
    char *p = path_of(name);
    assert_int_equal(file_write_atomic(p, data, len, 0644, NULL), 0);
    free(p);
}

static void put_s(const char *name, const char *text)
{
    put(name, text, strlen(text));
}

/* The file's content; caller frees. NULL when it does not exist. */
static char *get(const char *name, size_t *len)
{
    char *p = path_of(name), *data = NULL;
    int rc = file_read_all(p, &data, len, NULL);
    free(p);
    return rc == 0 ? data : NULL;
}

static void assert_content(const char *name, const char *want)
{
    size_t len;
    char *got = get(name, &len);
    assert_non_null(got);
    assert_string_equal(got, want);
    assert_int_equal(len, strlen(want));
    free(got);
}

/* Runs a tool; input is stolen. */
static tool_result call(const tool_def *t, json_t *input)
{
    tool_result r;
    tool_result_init(&r);
    loom_str why = LOOM_STR_INIT;
    /* validate and run must agree: a call validate refuses is refused by run too. */
    int v = t->validate ? t->validate(input, &F->ctx, &why) : 0;
    assert_int_equal(t->run(input, &F->ctx, &r), 0);
    if (v != 0) {
        assert_true(r.is_error);
        assert_string_equal(str_cstr(&why), str_cstr(&r.text));
    }
    str_free(&why);
    json_decref(input);
    /* What the model sees must survive JSON. */
    json_t *probe = json_stringn(str_cstr(&r.text), r.text.len);
    assert_non_null(probe);
    json_decref(probe);
    return r;
}

static tool_result do_read(const char *name)
{
    return call(&tool_read, json_pack("{s:s}", "file_path", name));
}

static void read_ok(const char *name)
{
    tool_result r = do_read(name);
    assert_false(r.is_error);
    tool_result_free(&r);
}

static tool_result do_write(const char *name, const char *content)
{
    return call(&tool_write, json_pack("{s:s, s:s}", "file_path", name, "content", content));
}

static tool_result do_edit(const char *name, const char *old, const char *neu, bool all)
{
    return call(&tool_edit, json_pack("{s:s, s:s, s:s, s:b}", "file_path", name, "old_string",
                                      old, "new_string", neu, "replace_all", all));
}

static void assert_has(const tool_result *r, const char *needle)
{
    if (!strstr(str_cstr(&r->text), needle))
        fail_msg("expected \"%s\" in:\n%s", needle, str_cstr(&r->text));
}

/* Sets the file's mtime forward by secs. */
static void bump_mtime(const char *name, int secs)
{
    char *p = path_of(name);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    struct timespec t[2] = {{0, UTIME_OMIT}, {st.st_mtim.tv_sec + secs, st.st_mtim.tv_nsec}};
    assert_int_equal(utimensat(AT_FDCWD, p, t, 0), 0);
    free(p);
}

/* ---- Read ------------------------------------------------------------------- */

/* seed 000 row 3.11: a sub-agent starts knowing what its parent read; what
 * it reads afterwards stays its own. */
static void test_file_state_clone(void **state)
{
    (void)state;
    put_s("a.txt", "one\n");
    put_s("b.txt", "two\n");
    read_ok("a.txt");
    file_state *child = file_state_clone(F->ctx.files);
    file_state *parent = F->ctx.files;
    char *a = path_of("a.txt"), *b = path_of("b.txt");
    assert_int_equal(file_state_check(child, a, NULL), 0);
    assert_int_equal(file_state_check(child, b, NULL), 1);
    F->ctx.files = child;
    read_ok("b.txt");
    F->ctx.files = parent;
    assert_int_equal(file_state_check(child, b, NULL), 0);
    assert_int_equal(file_state_check(parent, b, NULL), 1);
    file_state_free(child);
    free(a);
    free(b);
}

static void test_read_numbering(void **state)
{
    put_s("a.txt", "alpha\nbeta\ngamma\n");
    tool_result r = do_read("a.txt");
    assert_false(r.is_error);
    assert_string_equal(str_cstr(&r.text), "     1\talpha\n     2\tbeta\n     3\tgamma\n");
    assert_int_equal(json_integer_value(json_object_get(r.raw, "totalLines")), 3);
    tool_result_free(&r);

    /* No final newline: the last line still counts; CRs are not shown. */
    put_s("b.txt", "one\r\ntwo");
    r = do_read("b.txt");
    assert_string_equal(str_cstr(&r.text), "     1\tone\n     2\ttwo\n");
    tool_result_free(&r);
}

static void test_read_offset_limit(void **state)
{
    loom_str s = LOOM_STR_INIT;
    for (int i = 1; i <= 10; i++)
        str_printf(&s, "line %d\n", i);
    put("ten.txt", s.ptr, s.len);
    str_free(&s);

    tool_result r = call(&tool_read, json_pack("{s:s, s:i, s:i}", "file_path", "ten.txt",
                                               "offset", 3, "limit", 2));
    assert_false(r.is_error);
    assert_has(&r, "     3\tline 3\n     4\tline 4\n");
    assert_null(strstr(str_cstr(&r.text), "line 5"));
    assert_has(&r, "6 more lines; use offset=5");
    tool_result_free(&r);

    r = call(&tool_read, json_pack("{s:s, s:i}", "file_path", "ten.txt", "offset", 10));
    assert_string_equal(str_cstr(&r.text), "    10\tline 10\n");
    tool_result_free(&r);

    r = call(&tool_read, json_pack("{s:s, s:i}", "file_path", "ten.txt", "offset", 11));
    assert_false(r.is_error);
    assert_has(&r, "has 10 lines; offset 11 is past its end");
    tool_result_free(&r);

    r = call(&tool_read, json_pack("{s:s, s:i}", "file_path", "ten.txt", "limit", 0));
    assert_true(r.is_error);
    tool_result_free(&r);

    /* A partial read counts as a read: Write may now replace the file. */
    tool_result w = do_write("ten.txt", "new\n");
    assert_false(w.is_error);
    tool_result_free(&w);
}

static void test_read_long_line(void **state)
{
    size_t n = 3000;
    char *line = xmalloc(n + 2);
    memset(line, 'x', n);
    line[n] = '\n';
    line[n + 1] = '\0';
    put_s("long.txt", line);
    tool_result r = do_read("long.txt");
    assert_false(r.is_error);
    const char *t = str_cstr(&r.text);
    assert_memory_equal(t, "     1\t", 7);
    size_t xs = strspn(t + 7, "x");
    assert_int_equal(xs, 2000);
    assert_has(&r, "line cut: 3000 characters");
    tool_result_free(&r);
    free(line);

    /* Characters, not bytes: 2500 two-byte characters are cut at 2000. */
    loom_str s = LOOM_STR_INIT;
    for (int i = 0; i < 2500; i++)
        str_puts(&s, "\xc3\xa9");
    put("utf8.txt", s.ptr, s.len);
    str_free(&s);
    r = do_read("utf8.txt");
    assert_has(&r, "line cut: 2500 characters");
    tool_result_free(&r);
}

static void test_read_empty_dir_binary_missing(void **state)
{
    put_s("empty.txt", "");
    tool_result r = do_read("empty.txt");
    assert_false(r.is_error);
    assert_has(&r, "is empty");
    tool_result_free(&r);

    char *sub = path_of("sub");
    mkdir(sub, 0755);
    r = do_read("sub");
    assert_true(r.is_error);
    assert_has(&r, "is a directory");
    assert_has(&r, "Glob");
    tool_result_free(&r);
    free(sub);

    put("blob.bin", "ELF\0\1\2\3", 7);
    r = do_read("blob.bin");
    assert_true(r.is_error);
    assert_has(&r, "binary");
    tool_result_free(&r);

    put_s("notes.txt", "hello\n");
    r = do_read("Notes.txt");
    assert_true(r.is_error);
    char *want = path_of("Notes.txt");
    assert_has(&r, want);
    free(want);
    want = path_of("notes.txt");
    assert_has(&r, "Did you mean");
    assert_has(&r, want);
    free(want);
    tool_result_free(&r);

    r = do_read("nothing-like-it-here.zzz");
    assert_true(r.is_error);
    assert_has(&r, "File does not exist");
    assert_null(strstr(str_cstr(&r.text), "Did you mean"));
    tool_result_free(&r);

    /* Invalid UTF-8 is shown as U+FFFD, never passed on. */
    put("latin1.txt", "caf\xe9\n", 5);
    r = do_read("latin1.txt");
    assert_false(r.is_error);
    assert_string_equal(str_cstr(&r.text), "     1\tcaf\xef\xbf\xbd\n");
    tool_result_free(&r);
}

static void test_read_image(void **state)
{
    /* A PNG signature plus three bytes is enough for the sniffer. */
    static const unsigned char png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 1, 2};
    put("pic.dat", png, sizeof png);
    tool_result r = do_read("pic.dat");
    assert_false(r.is_error);
    assert_string_equal(r.image_media_type, "image/png");
    assert_string_equal(r.image_data, "iVBORw0KGgoAAQI=");
    assert_has(&r, "image/png");
    tool_result_free(&r);

    static const unsigned char jpg[] = {0xff, 0xd8, 0xff, 0xe0, 0, 0x10};
    put("photo.png", jpg, sizeof jpg);   /* the name lies; the bytes decide */
    r = do_read("photo.png");
    assert_string_equal(r.image_media_type, "image/jpeg");
    assert_string_equal(r.image_data, "/9j/4AAQ");
    tool_result_free(&r);
}

/* ---- Write -------------------------------------------------------------------- */

static void test_write_new_and_existing(void **state)
{
    tool_result r = do_write("deep/er/new.txt", "fresh\n");
    assert_false(r.is_error);
    char *p = path_of("deep/er/new.txt");
    assert_has(&r, "File created successfully at: ");
    assert_has(&r, p);
    free(p);
    tool_result_free(&r);
    assert_content("deep/er/new.txt", "fresh\n");

    /* A file we created may be edited straight away. */
    r = do_edit("deep/er/new.txt", "fresh", "fresher", false);
    assert_false(r.is_error);
    tool_result_free(&r);
    assert_content("deep/er/new.txt", "fresher\n");

    /* Existing, never read: refused, untouched. */
    put_s("old.txt", "keep me\n");
    r = do_write("old.txt", "gone\n");
    assert_true(r.is_error);
    assert_string_equal(str_cstr(&r.text), FILE_STATE_NOT_READ);
    tool_result_free(&r);
    assert_content("old.txt", "keep me\n");

    /* After a Read: allowed, and the mode is kept. */
    p = path_of("old.txt");
    chmod(p, 0640);
    read_ok("old.txt");
    r = do_write("old.txt", "replaced\n");
    assert_false(r.is_error);
    assert_has(&r, "has been updated");
    tool_result_free(&r);
    assert_content("old.txt", "replaced\n");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    free(p);

    /* Content with NUL bytes is written exactly. */
    json_t *in = json_pack("{s:s, s:o}", "file_path", "nul.bin", "content",
                           json_stringn("a\0b", 3));
    r = call(&tool_write, in);
    assert_false(r.is_error);
    tool_result_free(&r);
    size_t len;
    char *got = get("nul.bin", &len);
    assert_int_equal(len, 3);
    assert_memory_equal(got, "a\0b", 3);
    free(got);

    /* A directory is refused by both tools. */
    char *sub = path_of("adir");
    mkdir(sub, 0755);
    free(sub);
    r = do_write("adir", "x");
    assert_true(r.is_error);
    assert_has(&r, "is a directory");
    tool_result_free(&r);
    r = do_edit("adir", "a", "b", false);
    assert_true(r.is_error);
    assert_has(&r, "is a directory");
    tool_result_free(&r);
}

static void test_write_through_symlink(void **state)
{
    put_s("target.txt", "t\n");
    char *t = path_of("target.txt"), *l = path_of("link.txt");
    assert_int_equal(symlink(t, l), 0);
    read_ok("link.txt");   /* read through the link, write through the real name */
    tool_result r = do_write("target.txt", "u\n");
    assert_false(r.is_error);
    tool_result_free(&r);
    r = do_edit("link.txt", "u", "v", false);
    assert_false(r.is_error);
    tool_result_free(&r);
    struct stat st;
    assert_int_equal(lstat(l, &st), 0);
    assert_true(S_ISLNK(st.st_mode));   /* the link survives */
    assert_content("target.txt", "v\n");
    free(t);
    free(l);
}

static void test_changed_since_read(void **state)
{
    put_s("f.txt", "version one\n");
    read_ok("f.txt");
    /* Same size, different content, later mtime: only the hash can tell. */
    put_s("f.txt", "version two\n");
    bump_mtime("f.txt", 10);
    tool_result r = do_write("f.txt", "mine\n");
    assert_true(r.is_error);
    assert_string_equal(str_cstr(&r.text), FILE_STATE_MODIFIED);
    tool_result_free(&r);
    r = do_edit("f.txt", "two", "three", false);
    assert_true(r.is_error);
    assert_string_equal(str_cstr(&r.text), FILE_STATE_MODIFIED);
    tool_result_free(&r);
    assert_content("f.txt", "version two\n");

    /* Different size: modified whatever the mtime. */
    read_ok("f.txt");
    put_s("f.txt", "version three\n");
    r = do_edit("f.txt", "three", "four", false);
    assert_true(r.is_error);
    assert_string_equal(str_cstr(&r.text), FILE_STATE_MODIFIED);
    tool_result_free(&r);

    /* A touch changes nothing: the hash matches and the edit goes through. */
    read_ok("f.txt");
    bump_mtime("f.txt", 20);
    r = do_edit("f.txt", "three", "four", false);
    assert_false(r.is_error);
    tool_result_free(&r);
    assert_content("f.txt", "version four\n");

    /* Deleted since the read. */
    char *p = path_of("f.txt");
    unlink(p);
    free(p);
    r = do_edit("f.txt", "four", "five", false);
    assert_true(r.is_error);
    tool_result_free(&r);
}

/* ---- Edit --------------------------------------------------------------------- */

static void test_edit_rules(void **state)
{
    put_s("e.c", "int a = 1;\nint b = 1;\nint c = 1;\n");
    read_ok("e.c");

    tool_result r = do_edit("e.c", "int b = 1;", "int b = 2;", false);
    assert_false(r.is_error);
    assert_has(&r, "has been updated");
    assert_has(&r, "     2\tint b = 2;\n");
    tool_result_free(&r);
    assert_content("e.c", "int a = 1;\nint b = 2;\nint c = 1;\n");

    r = do_edit("e.c", "= 1;", "= 3;", false);
    assert_true(r.is_error);
    assert_has(&r, "Found 2 matches");
    assert_has(&r, "replace_all");
    assert_has(&r, "more context");
    tool_result_free(&r);
    assert_content("e.c", "int a = 1;\nint b = 2;\nint c = 1;\n");

    r = do_edit("e.c", "= 1;", "= 3;", true);
    assert_false(r.is_error);
    assert_has(&r, "All 2 occurrences");
    tool_result_free(&r);
    assert_content("e.c", "int a = 3;\nint b = 2;\nint c = 3;\n");

    r = do_edit("e.c", "int  b", "int d", false);
    assert_true(r.is_error);
    assert_has(&r, "not found");
    assert_has(&r, "whitespace");
    tool_result_free(&r);

    r = do_edit("e.c", "int b", "int b", false);
    assert_true(r.is_error);
    assert_has(&r, "exactly the same");
    tool_result_free(&r);

    /* An empty old_string creates a file, but never clobbers one. */
    r = do_edit("made.txt", "", "made\n", false);
    assert_false(r.is_error);
    assert_has(&r, "File created successfully");
    tool_result_free(&r);
    assert_content("made.txt", "made\n");
    r = do_edit("e.c", "", "x", false);
    assert_true(r.is_error);
    assert_has(&r, "already exists");
    tool_result_free(&r);

    r = do_edit("nope.txt", "a", "b", false);
    assert_true(r.is_error);
    assert_has(&r, "does not exist");
    tool_result_free(&r);
}

static void test_edit_crlf(void **state)
{
    put_s("w.txt", "one\r\ntwo\r\nthree\r\n");
    tool_result r = do_read("w.txt");
    assert_string_equal(str_cstr(&r.text), "     1\tone\n     2\ttwo\n     3\tthree\n");
    tool_result_free(&r);
    r = do_edit("w.txt", "one\ntwo\n", "uno\ndos\ndos-bis\n", false);
    assert_false(r.is_error);
    assert_null(strchr(str_cstr(&r.text), '\r'));
    tool_result_free(&r);
    assert_content("w.txt", "uno\r\ndos\r\ndos-bis\r\nthree\r\n");
}

/* ---- file history ------------------------------------------------------------- */

static json_t *rec_at(size_t i)
{
    return json_array_get(F->records, i);
}

static json_t *backup_of(json_t *rec, const char *path)
{
    return json_object_get(json_get_obj(json_get_obj(rec, "snapshot"), "trackedFileBackups"),
                           path);
}

static char *backup_content(const char *name)
{
    char *p = join(file_history_dir(F->ctx.history), name);
    char *data = NULL;
    assert_int_equal(file_read_all(p, &data, NULL, NULL), 0);
    free(p);
    return data;
}

static void test_snapshots(void **state)
{
    char *a = path_of("a.txt"), *b = path_of("b.txt");
    put_s("a.txt", "A0\n");
    F->watch_path = xstrdup(a);
    read_ok("a.txt");

    F->ctx.message_id = "m1";
    tool_result r = do_edit("a.txt", "A0", "A1", false);
    assert_false(r.is_error);
    tool_result_free(&r);
    assert_int_equal(json_array_size(F->records), 1);
    /* Emitted before the write: the file still held the old text then. */
    assert_string_equal(json_string_value(json_array_get(F->watch_seen, 0)), "A0\n");
    json_t *s = rec_at(0);
    assert_string_equal(json_get_str(s, "type", ""), "file-history-snapshot");
    assert_string_equal(json_get_str(s, "messageId", ""), "m1");
    assert_string_equal(json_get_str(json_get_obj(s, "snapshot"), "messageId", ""), "m1");
    assert_false(json_get_bool(s, "isSnapshotUpdate", true));
    json_t *ea = backup_of(s, a);
    assert_non_null(ea);
    assert_int_equal(json_get_int(ea, "version", 0), 1);
    assert_true(json_get_bool(ea, "existedAtTrack", false));
    assert_non_null(json_get_str(ea, "backupTime", NULL));
    char *bk = backup_content(json_get_str(ea, "backupFileName", ""));
    assert_string_equal(bk, "A0\n");
    free(bk);

    /* Same message, a new file: an update listing both (cumulative). */
    r = do_write("b.txt", "B1\n");
    assert_false(r.is_error);
    tool_result_free(&r);
    assert_int_equal(json_array_size(F->records), 2);
    s = rec_at(1);
    assert_true(json_get_bool(s, "isSnapshotUpdate", false));
    assert_non_null(backup_of(s, a));
    json_t *eb = backup_of(s, b);
    assert_non_null(eb);
    assert_false(json_get_bool(eb, "existedAtTrack", true));
    assert_true(json_is_null(json_object_get(eb, "backupFileName")));

    /* A second write of a.txt in the same message takes no new backup. */
    r = do_edit("a.txt", "A1", "A2", false);
    tool_result_free(&r);
    assert_int_equal(json_array_size(F->records), 2);

    /* The next message backs a.txt up again; b.txt is still listed. */
    F->ctx.message_id = "m2";
    r = do_edit("a.txt", "A2", "A3", false);
    tool_result_free(&r);
    assert_int_equal(json_array_size(F->records), 3);
    s = rec_at(2);
    assert_false(json_get_bool(s, "isSnapshotUpdate", true));
    assert_int_equal(json_get_int(backup_of(s, a), "version", 0), 2);
    assert_int_equal(json_get_int(backup_of(s, b), "version", 0), 1);
    bk = backup_content(json_get_str(backup_of(s, a), "backupFileName", ""));
    assert_string_equal(bk, "A2\n");
    free(bk);
    free(a);
    free(b);
}

/* m1: edit a.txt (A0 -> A1), create b.txt; m2: edit a.txt (A1 -> A2). */
static void two_messages(const char *m1, const char *m2)
{
    put_s("a.txt", "A0\n");
    read_ok("a.txt");
    F->ctx.message_id = m1;
    tool_result r = do_edit("a.txt", "A0", "A1", false);
    assert_false(r.is_error);
    tool_result_free(&r);
    r = do_write("sub/b.txt", "B1\n");
    assert_false(r.is_error);
    tool_result_free(&r);
    F->ctx.message_id = m2;
    r = do_edit("a.txt", "A1", "A2", false);
    assert_false(r.is_error);
    tool_result_free(&r);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* A backup name already on disk (an abandoned branch, an earlier run) is
 * skipped, never overwritten; no temp files are left behind. */
static void test_backup_names_unique(void **state)
{
    char *a = path_of("a.txt");
    put_s("a.txt", "A0\n");
    read_ok("a.txt");
    const char *dir = file_history_dir(F->ctx.history);
    assert_int_equal(file_mkdirs(dir, 0700, NULL), 0);
    loom_str stale = LOOM_STR_INIT;
    str_printf(&stale, "%s/%016llx@v1", dir,
               (unsigned long long)hash_fnv1a64(FILE_STATE_HASH_SEED, a, strlen(a)));
    assert_int_equal(file_write_atomic(stale.ptr, "stale", 5, 0600, NULL), 0);
    tool_result r = do_edit("a.txt", "A0", "A1", false);
    assert_false(r.is_error);
    tool_result_free(&r);
    json_t *e = backup_of(rec_at(0), a);
    assert_int_equal(json_get_int(e, "version", 0), 2);
    char *bk = backup_content(json_get_str(e, "backupFileName", ""));
    assert_string_equal(bk, "A0\n");
    free(bk);
    char *old = NULL;
    assert_int_equal(file_read_all(stale.ptr, &old, NULL, NULL), 0);
    assert_string_equal(old, "stale");
    free(old);
    assert_int_equal(count_entries(dir), 2);
    str_free(&stale);
    free(a);
}

static void test_rewind(void **state)
{
    two_messages("m1", "m2");
    loom_str rep = LOOM_STR_INIT;
    loom_error err;
    assert_true(file_history_has_changes(F->ctx.history, "m2"));
    assert_int_equal(file_history_rewind(F->ctx.history, "m2", &rep, &err), 0);
    assert_content("a.txt", "A1\n");
    assert_content("sub/b.txt", "B1\n");
    assert_non_null(strstr(str_cstr(&rep), "restored"));

    str_clear(&rep);
    assert_int_equal(file_history_rewind(F->ctx.history, "m1", &rep, &err), 0);
    assert_content("a.txt", "A0\n");
    size_t len;
    char *gone = get("sub/b.txt", &len);
    assert_null(gone);
    assert_non_null(strstr(str_cstr(&rep), "deleted"));

    /* Nothing left to undo. */
    assert_false(file_history_has_changes(F->ctx.history, "m1"));
    str_clear(&rep);
    assert_int_equal(file_history_rewind(F->ctx.history, "m1", &rep, &err), 0);
    assert_non_null(strstr(str_cstr(&rep), "No file changes"));
    str_free(&rep);

    /* An id that is neither a tracked message nor a UUID cannot be placed. */
    F->ctx.message_id = "m3";
    read_ok("a.txt");
    tool_result r = do_edit("a.txt", "A0", "A9", false);
    tool_result_free(&r);
    assert_true(file_history_rewind(F->ctx.history, "bogus", NULL, &err) < 0);
    assert_int_equal(err.code, LOOM_ERR_INVALID_REQUEST);
    assert_content("a.txt", "A9\n");
}

static void test_rewind_after_reload(void **state)
{
    /* UUIDv7 ids as the loop uses; u0 stands for the user message before m1. */
    char u0[UUID_STR_LEN], m1[UUID_STR_LEN], m2[UUID_STR_LEN];
    uuid_v7(u0);
    uuid_v7(m1);
    uuid_v7(m2);
    two_messages(m1, m2);

    /* A resumed session: a fresh history rebuilt from the session's records
     * (a conversation record mixed in, as a session file would have). */
    json_t *all = json_array();
    json_array_append_new(all, json_pack("{s:s, s:s}", "type", "message", "role", "user"));
    for (size_t i = 0; i < json_array_size(F->records); i++)
        json_array_append(all, rec_at(i));
    size_t n = json_array_size(all);
    json_t **recs = xcalloc(n, sizeof *recs);
    for (size_t i = 0; i < n; i++)
        recs[i] = json_array_get(all, i);
    file_history *fh = file_history_new("sess-1");
    assert_int_equal(file_history_load(fh, recs, n), json_array_size(F->records));
    free(recs);
    json_decref(all);

    loom_str rep = LOOM_STR_INIT;
    loom_error err;
    /* The user message's own id places the cut before m1. */
    assert_int_equal(file_history_rewind(fh, u0, &rep, &err), 0);
    assert_content("a.txt", "A0\n");
    assert_null(get("sub/b.txt", NULL));
    str_free(&rep);
    file_history_free(fh);
}

static void test_checkpointing_disabled(void **state)
{
    setenv("LOOM_DISABLE_FILE_CHECKPOINTING", "1", 1);
    file_history *fh = file_history_new("sess-off");
    unsetenv("LOOM_DISABLE_FILE_CHECKPOINTING");
    assert_false(file_history_enabled(fh));
    file_history_free(F->ctx.history);
    F->ctx.history = fh;
    tool_result r = do_write("x.txt", "x\n");
    assert_false(r.is_error);
    tool_result_free(&r);
    assert_int_equal(json_array_size(F->records), 0);
    char *dir = join(F->home, "file-history/sess-off");
    assert_false(file_exists(dir));
    free(dir);
}

static void test_file_state_api(void **state)
{
    file_state *fs = file_state_new();
    put_s("s.txt", "abc");
    char *p = path_of("s.txt");
    loom_str why = LOOM_STR_INIT;
    assert_int_equal(file_state_check(fs, p, &why), 1);
    assert_string_equal(str_cstr(&why), FILE_STATE_NOT_READ);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    file_state_note(fs, p, &st, FILE_STATE_NO_HASH);
    assert_int_equal(file_state_check(fs, p, &why), 0);
    /* Without a hash a new mtime cannot be excused. */
    bump_mtime("s.txt", 5);
    assert_int_equal(file_state_check(fs, p, &why), 1);
    assert_string_equal(str_cstr(&why), FILE_STATE_MODIFIED);
    /* Many entries: the table grows and keeps them all. */
    for (int i = 0; i < 200; i++) {
        char name[32];
        snprintf(name, sizeof name, "/nonexistent/f%d", i);
        file_state_note(fs, name, &st, 1);
    }
    assert_int_equal(file_state_check(fs, "/nonexistent/f7", &why), 1);
    assert_string_equal(str_cstr(&why), FILE_STATE_MODIFIED);   /* noted, then gone */
    assert_int_equal(file_state_check(NULL, p, &why), 1);
    assert_int_equal(hash_fnv1a64(FILE_STATE_HASH_SEED, "a", 1), UINT64_C(0xaf63dc4c8601ec8c));
    str_free(&why);
    free(p);
    file_state_free(fs);
}

static void test_read_output_cap(void **state)
{
    /* 400 lines of 1000 characters: more than the 256 KiB a Read returns. */
    loom_str s = LOOM_STR_INIT;
    for (int i = 0; i < 400; i++) {
        for (int k = 0; k < 1000; k++)
            str_putc(&s, (char)('a' + i % 26));
        str_putc(&s, '\n');
    }
    put("wide.txt", s.ptr, s.len);
    str_free(&s);
    tool_result r = do_read("wide.txt");
    assert_false(r.is_error);
    assert_true(r.text.len <= 256 * 1024 + 200);
    assert_has(&r, "Output cut at 256 KiB after line 260; read on with offset=261");
    assert_true(json_is_true(json_object_get(r.raw, "truncated")));
    tool_result_free(&r);
}

static void test_backup_failure_blocks_write(void **state)
{
    /* LOOM_HOME is a file: no backup can be taken, so nothing is written. */
    char *bad = join(F->root, "home-is-a-file");
    assert_int_equal(file_write_atomic(bad, "x", 1, 0644, NULL), 0);
    setenv("LOOM_HOME", bad, 1);
    file_history_free(F->ctx.history);
    F->ctx.history = file_history_new("sess-1");
    setenv("LOOM_HOME", F->home, 1);
    put_s("k.txt", "keep\n");
    read_ok("k.txt");
    tool_result r = do_edit("k.txt", "keep", "lose", false);
    assert_true(r.is_error);
    assert_has(&r, "was not changed");
    assert_has(&r, "LOOM_DISABLE_FILE_CHECKPOINTING");
    tool_result_free(&r);
    assert_content("k.txt", "keep\n");
    assert_int_equal(json_array_size(F->records), 0);
    free(bad);
}

typedef struct hammer_arg {
    file_state *fs;
    const char *path;
    int id;
} hammer_arg;

static void *hammer(void *p)
{
    hammer_arg *a = p;
    struct stat st;
    if (stat(a->path, &st) != 0)
        return (void *)1;
    loom_str why = LOOM_STR_INIT;
    for (int i = 0; i < 300; i++) {
        char name[64];
        snprintf(name, sizeof name, "/nonexistent/t%d/f%d", a->id, i);
        file_state_note(a->fs, name, &st, 1);
        file_state_note(a->fs, a->path, &st, FILE_STATE_NO_HASH);
        if (file_state_check(a->fs, a->path, &why) != 0) {
            str_free(&why);
            return (void *)1;
        }
    }
    str_free(&why);
    return NULL;
}

/* Concurrent Reads note while a check runs: the cache must stay whole. */
static void test_file_state_threads(void **state)
{
    put_s("shared.txt", "s\n");
    char *p = path_of("shared.txt");
    file_state *fs = file_state_new();
    pthread_t th[4];
    hammer_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (hammer_arg){fs, p, i};
        assert_int_equal(pthread_create(&th[i], NULL, hammer, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        assert_null(ret);
    }
    loom_str why = LOOM_STR_INIT;
    assert_int_equal(file_state_check(fs, "/nonexistent/t3/f299", &why), 1);
    assert_string_equal(str_cstr(&why), FILE_STATE_MODIFIED);
    str_free(&why);
    file_state_free(fs);
    free(p);
}

/* Read never opens a FIFO, device or socket (issue #10): a clear error,
 * at once (a blocking open of a FIFO without a writer would never return). */
static void test_read_fifo_device_socket(void **state)
{
    char *fifo = path_of("pipe.txt");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    tool_result r = do_read("pipe.txt");
    assert_true(r.is_error);
    assert_has(&r, "not a regular file");
    tool_result_free(&r);
    /* Through a symbolic link too. */
    char *link = path_of("link.txt");
    assert_int_equal(symlink(fifo, link), 0);
    r = do_read("link.txt");
    assert_true(r.is_error);
    assert_has(&r, "not a regular file");
    tool_result_free(&r);
    free(link);
    free(fifo);

    const char *const devices[] = {"/dev/zero", "/dev/null", "/dev/urandom"};
    for (size_t i = 0; i < 3; i++) {
        r = do_read(devices[i]);
        assert_true(r.is_error);
        assert_has(&r, "not a regular file");
        tool_result_free(&r);
    }

    char *sock = path_of("s.sock");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    if (strlen(sock) < sizeof sa.sun_path && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
        r = do_read("s.sock");
        assert_true(r.is_error);
        assert_has(&r, "not a regular file");
        tool_result_free(&r);
    }
    close(fd);
    free(sock);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_numbering, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_state_clone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_offset_limit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_long_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_empty_dir_binary_missing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_image, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_new_and_existing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_through_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_since_read, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edit_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edit_crlf, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshots, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backup_names_unique, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewind, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewind_after_reload, setup, teardown),
        cmocka_unit_test_setup_teardown(test_checkpointing_disabled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_state_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_output_cap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_backup_failure_blocks_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_file_state_threads, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_fifo_device_socket, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
