/* test_api_io_port.c — the driver's I/O port (loom_run_options.io, loom.h)
 * through loom.h against the replay provider: Read shows the driver's text
 * (an unsaved buffer that differs from the disk), Edit edits that text and
 * writes it back through the driver with the disk untouched, Write of a new
 * file goes to the driver; a buffer changed since the Read refuses the
 * Edit; a denied Edit asks the driver nothing; Bash runs through run_command (command, cwd and call id given, the
 * output and exit code reach the model), a command a rule denies never
 * reaches it, a cancel reaches it as stop_requested; a sandboxed command
 * and a run without the port stay local; a driver's failure is the tool's
 * error result. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "loom.h"
#include "tmpdir.h"

static char home[256], work[300];

static int setup(void **state)
{
    (void)state;
    tmpdir_loom_home(home, sizeof home, work, sizeof work, "loom-ioport");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(home);
}

/* ---- a fake driver: buffers by path, a terminal that records ------------ */

#define MAX_BUFS 8

typedef struct fake_driver {
    pthread_mutex_t mu;
    char *path[MAX_BUFS], *text[MAX_BUFS];
    size_t n;
    int reads, writes, commands;
    char *command, *cwd, *call_id;
    long timeout_ms;
    const char *output; /* what the terminal prints */
    int exit_code;
    bool wait_for_stop; /* the command runs until the run is cancelled */
    bool saw_stop;
    bool fail_reads;
    const char *typed_after_read; /* the person types after the first read */
} fake_driver;

static fake_driver *driver_new(void)
{
    fake_driver *d = calloc(1, sizeof *d);
    pthread_mutex_init(&d->mu, NULL);
    d->output = "";
    return d;
}

static void driver_free(fake_driver *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->path[i]);
        free(d->text[i]);
    }
    free(d->command);
    free(d->cwd);
    free(d->call_id);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

static void driver_put(fake_driver *d, const char *path, const char *text)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->path[i], path)) {
            free(d->text[i]);
            d->text[i] = strdup(text);
            return;
        }
    assert_true(d->n < MAX_BUFS);
    d->path[d->n] = strdup(path);
    d->text[d->n++] = strdup(text);
}

static const char *driver_get(fake_driver *d, const char *path)
{
    for (size_t i = 0; i < d->n; i++)
        if (!strcmp(d->path[i], path))
            return d->text[i];
    return NULL;
}

static char *fake_read(void *ctx, const char *path, size_t *len, char **error)
{
    fake_driver *d = ctx;
    pthread_mutex_lock(&d->mu);
    d->reads++;
    const char *t = d->fail_reads ? NULL : driver_get(d, path);
    char *copy = t ? strdup(t) : NULL;
    if (copy && d->typed_after_read && d->reads == 1)
        driver_put(d, path, d->typed_after_read);
    pthread_mutex_unlock(&d->mu);
    if (!copy) {
        *error = strdup(d->fail_reads ? "the editor is busy" : "no such buffer");
        return NULL;
    }
    *len = strlen(copy);
    return copy;
}

static int fake_write(void *ctx, const char *path, const char *text, size_t len, char **error)
{
    (void)error;
    fake_driver *d = ctx;
    pthread_mutex_lock(&d->mu);
    d->writes++;
    char *copy = strndup(text, len);
    driver_put(d, path, copy);
    free(copy);
    pthread_mutex_unlock(&d->mu);
    return 0;
}

static int fake_run(void *ctx, const loom_io_command *cmd, loom_io_outcome *out, char **error)
{
    (void)error;
    fake_driver *d = ctx;
    pthread_mutex_lock(&d->mu);
    d->commands++;
    free(d->command);
    free(d->cwd);
    free(d->call_id);
    d->command = strdup(cmd->command);
    d->cwd = strdup(cmd->cwd);
    d->call_id = cmd->call_id ? strdup(cmd->call_id) : NULL;
    d->timeout_ms = cmd->timeout_ms;
    pthread_mutex_unlock(&d->mu);
    if (d->wait_for_stop) {
        while (!cmd->stop_requested(cmd->stop_ctx))
            usleep(10000);
        d->saw_stop = true;
        out->cancelled = true;
        out->exit_code = -1;
        out->signal = strdup("SIGKILL");
        out->output = strdup("partial\n");
        return 0;
    }
    out->output = strdup(d->output);
    out->exit_code = d->exit_code;
    return 0;
}

static loom_io_port port_of(fake_driver *d)
{
    return (loom_io_port){.ctx = d, .read_text = fake_read, .write_text = fake_write,
                          .run_command = fake_run};
}

/* ---- runs ------------------------------------------------------------------ */

static loom_session *session_with(const char *name, const char *turns, const char *const *kv,
                                  loom_agent **agent_out)
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s.json", home, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "{\"turns\": %s}", turns);
    fclose(f);
    loom_config *cfg = loom_config_new();
    loom_status st;
    assert_int_equal(loom_config_set(cfg, "provider", "replay", &st), 0);
    assert_int_equal(loom_config_set(cfg, "cassette", path, &st), 0);
    assert_int_equal(loom_config_set(cfg, "cwd", work, &st), 0);
    for (size_t i = 0; kv && kv[i]; i += 2)
        if (loom_config_set(cfg, kv[i], kv[i + 1], &st) != 0)
            fail_msg("option %s=%s refused: %s", kv[i], kv[i + 1], st.message);
    loom_agent *agent = loom_agent_new(cfg, &st);
    loom_config_free(cfg);
    if (!agent)
        fail_msg("the agent was refused: %s", st.message);
    loom_session *s = loom_session_new(agent, &st);
    assert_non_null(s);
    *agent_out = agent;
    return s;
}

/* The tool.finished payloads of a run, in order (a JSON array), after it ended. */
static json_t *run_to_end(loom_session *s, const char *goal, const loom_io_port *io,
                          fake_driver *cancel_on_command)
{
    loom_run_options opts = {.queue_events = true, .io = io};
    loom_status st;
    loom_run *r = loom_run_start(s, goal, &opts, &st);
    assert_non_null(r);
    json_t *finished = json_array();
    loom_event *ev;
    bool cancelled = false;
    int rc;
    /* Short waits: a command the driver holds sends no event until the
     * cancel, which this loop is to give. */
    while ((rc = loom_run_next_event(r, &ev, 50)) >= 0) {
        if (rc == 1 && (!strcmp(ev->type, "tool.finished") || !strcmp(ev->type, "tool.failed"))) {
            json_t *e = json_loads(ev->json, 0, NULL);
            json_array_append(finished, json_object_get(e, "payload"));
            json_decref(e);
        }
        if (rc == 1)
            loom_event_free(ev);
        if (cancel_on_command && !cancelled) {
            pthread_mutex_lock(&cancel_on_command->mu);
            bool running = cancel_on_command->commands > 0;
            pthread_mutex_unlock(&cancel_on_command->mu);
            if (running) {
                loom_run_cancel(r);
                cancelled = true;
            }
        }
    }
    loom_run_free(r);
    return finished;
}

static const char *output_of(const json_t *finished, size_t i)
{
    const char *o = json_string_value(json_object_get(json_array_get(finished, i), "output"));
    if (!o)
        fail_msg("no tool.finished output #%zu", i);
    return o;
}

static void write_file(const char *rel, const char *text)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", work, rel);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_disk(const char *rel)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", work, rel);
    FILE *f = fopen(p, "r");
    if (!f)
        return NULL;
    char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strdup(buf);
}

static char *abs_of(const char *rel)
{
    char *p = malloc(400);
    snprintf(p, 400, "%s/%s", work, rel);
    return p;
}

static const char *const ACCEPT_EDITS[] = {"permission_mode", "acceptEdits", NULL};

/* ---- tests ------------------------------------------------------------------- */

static void test_read_edit_write_go_through_the_driver(void **state)
{
    (void)state;
    write_file("notes.txt", "disk says hello\n");
    fake_driver *d = driver_new();
    char *notes = abs_of("notes.txt"), *fresh = abs_of("fresh.txt");
    driver_put(d, notes, "buffer says hello\nunsaved line\n");
    loom_io_port io = port_of(d);
    const char *turns =
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"r1\", \"name\": \"Read\", \"input\": "
        "{\"file_path\": \"notes.txt\"}}]}},"
        " {\"reply\": {\"tool_calls\": [{\"id\": \"e1\", \"name\": \"Edit\", \"input\": "
        "{\"file_path\": \"notes.txt\", \"old_string\": \"hello\", \"new_string\": "
        "\"goodbye\"}}]}},"
        " {\"reply\": {\"tool_calls\": [{\"id\": \"w1\", \"name\": \"Write\", \"input\": "
        "{\"file_path\": \"fresh.txt\", \"content\": \"new file\\n\"}}]}},"
        " {\"reply\": {\"text\": \"Done.\"}}]";
    loom_agent *agent;
    loom_session *s = session_with("files", turns, ACCEPT_EDITS, &agent);
    json_t *fin = run_to_end(s, "edit the notes", &io, NULL);
    assert_int_equal(json_array_size(fin), 3);
    /* Read: the buffer, not the disk. */
    assert_non_null(strstr(output_of(fin, 0), "buffer says hello"));
    assert_non_null(strstr(output_of(fin, 0), "unsaved line"));
    assert_null(strstr(output_of(fin, 0), "disk says"));
    /* Edit: made on the buffer's text, written back through the driver. */
    assert_false(json_is_true(json_object_get(json_array_get(fin, 1), "is_error")));
    assert_string_equal(driver_get(d, notes), "buffer says goodbye\nunsaved line\n");
    char *disk = read_disk("notes.txt");
    assert_string_equal(disk, "disk says hello\n");
    free(disk);
    /* Write of a new file: the driver's, not the disk's. */
    assert_false(json_is_true(json_object_get(json_array_get(fin, 2), "is_error")));
    assert_string_equal(driver_get(d, fresh), "new file\n");
    assert_null(read_disk("fresh.txt"));
    assert_int_equal(d->writes, 2);
    json_decref(fin);

    /* The same session without the port: Loom's own files again. */
    const char *local =
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"r2\", \"name\": \"Read\", \"input\": "
        "{\"file_path\": \"notes.txt\"}}]}}, {\"reply\": {\"text\": \"Read.\"}}]";
    loom_agent *a2;
    loom_session *s2 = session_with("local", local, ACCEPT_EDITS, &a2);
    int reads = d->reads;
    fin = run_to_end(s2, "read the notes", NULL, NULL);
    assert_non_null(strstr(output_of(fin, 0), "disk says hello"));
    assert_int_equal(d->reads, reads);
    json_decref(fin);
    loom_session_free(s2);
    loom_agent_free(a2);
    loom_session_free(s);
    loom_agent_free(agent);
    free(notes);
    free(fresh);
    driver_free(d);
}

/* The person types in the buffer after the model's Read: the Edit must be
 * refused, and nothing written. */
static void test_a_buffer_changed_since_the_read_refuses_the_edit(void **state)
{
    (void)state;
    write_file("stale.txt", "same on disk\n");
    fake_driver *d = driver_new();
    char *path = abs_of("stale.txt");
    driver_put(d, path, "alpha beta\n");
    d->typed_after_read = "alpha beta typed\n";
    loom_io_port io = port_of(d);
    const char *turns =
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"r1\", \"name\": \"Read\", \"input\": "
        "{\"file_path\": \"stale.txt\"}}]}},"
        " {\"reply\": {\"tool_calls\": [{\"id\": \"e1\", \"name\": \"Edit\", \"input\": "
        "{\"file_path\": \"stale.txt\", \"old_string\": \"alpha\", \"new_string\": "
        "\"gamma\"}}]}},"
        " {\"reply\": {\"text\": \"Refused, as it should be.\"}}]";
    loom_agent *agent;
    loom_session *s = session_with("stale", turns, ACCEPT_EDITS, &agent);
    json_t *fin = run_to_end(s, "edit it", &io, NULL);
    assert_int_equal(json_array_size(fin), 2);
    assert_non_null(strstr(output_of(fin, 0), "alpha beta"));
    assert_true(json_is_true(json_object_get(json_array_get(fin, 1), "is_error")));
    assert_non_null(strstr(output_of(fin, 1), "modified since read"));
    assert_int_equal(d->writes, 0);
    assert_string_equal(driver_get(d, path), "alpha beta typed\n");
    json_decref(fin);
    loom_session_free(s);
    loom_agent_free(agent);
    free(path);
    driver_free(d);
}

/* A rule denies the Edit: the driver is not asked for the text, nor to
 * write (the tool's validation, before the decision, asks it nothing). */
static void test_a_denied_edit_asks_the_driver_nothing(void **state)
{
    (void)state;
    write_file("guarded.txt", "on disk\n");
    fake_driver *d = driver_new();
    char *path = abs_of("guarded.txt");
    driver_put(d, path, "guarded buffer\n");
    loom_io_port io = port_of(d);
    const char *turns =
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"r1\", \"name\": \"Read\", \"input\": "
        "{\"file_path\": \"guarded.txt\"}}]}},"
        " {\"reply\": {\"tool_calls\": [{\"id\": \"e1\", \"name\": \"Edit\", \"input\": "
        "{\"file_path\": \"guarded.txt\", \"old_string\": \"guarded\", \"new_string\": "
        "\"open\"}}]}},"
        " {\"reply\": {\"text\": \"Denied.\"}}]";
    const char *kv[] = {"permission_mode", "acceptEdits", "disallowed_tools", "Edit", NULL};
    loom_agent *agent;
    loom_session *s = session_with("denied-edit", turns, kv, &agent);
    json_t *fin = run_to_end(s, "edit it", &io, NULL);
    assert_int_equal(json_array_size(fin), 2);
    assert_true(json_is_true(json_object_get(json_array_get(fin, 1), "is_error")));
    assert_int_equal(d->reads, 1); /* the Read's, none for the Edit */
    assert_int_equal(d->writes, 0);
    json_decref(fin);
    loom_session_free(s);
    loom_agent_free(agent);
    free(path);
    driver_free(d);
}

static void test_a_driver_failure_is_the_tools_error(void **state)
{
    (void)state;
    fake_driver *d = driver_new();
    d->fail_reads = true;
    loom_io_port io = port_of(d);
    const char *turns =
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"r1\", \"name\": \"Read\", \"input\": "
        "{\"file_path\": \"busy.txt\"}}]}}, {\"reply\": {\"text\": \"Could not.\"}}]";
    loom_agent *agent;
    loom_session *s = session_with("fail", turns, ACCEPT_EDITS, &agent);
    json_t *fin = run_to_end(s, "read it", &io, NULL);
    assert_true(json_is_true(json_object_get(json_array_get(fin, 0), "is_error")));
    assert_non_null(strstr(output_of(fin, 0), "the editor is busy"));
    json_decref(fin);
    loom_session_free(s);
    loom_agent_free(agent);
    driver_free(d);
}

static void test_bash_goes_through_the_driver_after_the_rules(void **state)
{
    (void)state;
    fake_driver *d = driver_new();
    d->output = "driver-output\n";
    d->exit_code = 3;
    loom_io_port io = port_of(d);
    const char *turns =
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"b1\", \"name\": \"Bash\", \"input\": "
        "{\"command\": \"rm -rf precious\"}}]}},"
        " {\"reply\": {\"tool_calls\": [{\"id\": \"b2\", \"name\": \"Bash\", \"input\": "
        "{\"command\": \"echo through-the-driver\", \"timeout\": 5000}}]}},"
        " {\"reply\": {\"text\": \"Done.\"}}]";
    const char *kv[] = {"allowed_tools", "Bash(echo:*)", "disallowed_tools", "Bash(rm:*)", NULL};
    loom_agent *agent;
    loom_session *s = session_with("bash", turns, kv, &agent);
    json_t *fin = run_to_end(s, "run things", &io, NULL);
    assert_int_equal(json_array_size(fin), 2);
    /* The denied command: a denial the model reads; the driver never saw it. */
    assert_true(json_is_true(json_object_get(json_array_get(fin, 0), "is_error")));
    assert_int_equal(d->commands, 1);
    assert_string_equal(d->command, "echo through-the-driver");
    assert_string_equal(d->cwd, work);
    assert_string_equal(d->call_id, "b2");
    assert_int_equal(d->timeout_ms, 5000);
    /* The driver's output and exit code are what the model reads. */
    assert_non_null(strstr(output_of(fin, 1), "Exit code 3"));
    assert_non_null(strstr(output_of(fin, 1), "driver-output"));
    assert_true(json_is_true(json_object_get(json_array_get(fin, 1), "is_error")));
    json_decref(fin);
    loom_session_free(s);
    loom_agent_free(agent);
    driver_free(d);
}

static void test_a_cancel_reaches_the_drivers_command(void **state)
{
    (void)state;
    fake_driver *d = driver_new();
    d->wait_for_stop = true;
    loom_io_port io = port_of(d);
    const char *turns =
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"b1\", \"name\": \"Bash\", \"input\": "
        "{\"command\": \"echo forever\"}}]}}, {\"reply\": {\"text\": \"Stopped.\"}}]";
    const char *kv[] = {"allowed_tools", "Bash(echo:*)", NULL};
    loom_agent *agent;
    loom_session *s = session_with("cancel", turns, kv, &agent);
    json_t *fin = run_to_end(s, "run forever", &io, d);
    assert_true(d->saw_stop);
    assert_int_equal(json_array_size(fin), 1);
    assert_non_null(strstr(output_of(fin, 0), "interrupted"));
    json_decref(fin);
    loom_session_free(s);
    loom_agent_free(agent);
    driver_free(d);
}

static void test_a_sandboxed_command_stays_local(void **state)
{
    (void)state;
    /* The sandbox is on for this folder (or, where the kernel cannot
     * sandbox, on and unavailable): either way the command is Loom's. */
    char dir[400];
    snprintf(dir, sizeof dir, "%s/.loom", work);
    mkdir(dir, 0755);
    write_file(".loom/settings.json",
               "{\"sandbox\": {\"enabled\": true, \"onUnsupported\": \"warn\"}}");
    fake_driver *d = driver_new();
    loom_io_port io = port_of(d);
    const char *turns =
        "[{\"reply\": {\"tool_calls\": [{\"id\": \"b1\", \"name\": \"Bash\", \"input\": "
        "{\"command\": \"echo local-run > ran-here.txt\"}}]}}, {\"reply\": {\"text\": \"Ok.\"}}]";
    const char *kv[] = {"permission_mode", "bypassPermissions", NULL};
    loom_agent *agent;
    loom_session *s = session_with("sandboxed", turns, kv, &agent);
    json_t *fin = run_to_end(s, "run it", &io, NULL);
    assert_int_equal(d->commands, 0);
    char *ran = read_disk("ran-here.txt");
    assert_non_null(ran);
    assert_string_equal(ran, "local-run\n");
    free(ran);
    json_decref(fin);
    loom_session_free(s);
    loom_agent_free(agent);
    driver_free(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_read_edit_write_go_through_the_driver, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_buffer_changed_since_the_read_refuses_the_edit,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_denied_edit_asks_the_driver_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_driver_failure_is_the_tools_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bash_goes_through_the_driver_after_the_rules, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_cancel_reaches_the_drivers_command, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_sandboxed_command_stays_local, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
