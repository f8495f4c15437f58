/* bang.c — `!cmd` in the REPL, its output kept for the next prompt
 * (bang.h). */
#include "surfaces/cli/bang.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/sig.h"
#include "base/str.h"

typedef struct stream {
    int fd;
    loom_str kept;      /* for the conversation, up to BANG_OUTPUT_CAP */
    size_t dropped;
    loom_str line;      /* a partial line not yet shown */
} stream;

static void xml_escape(loom_str *out, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '&')
            str_puts(out, "&amp;");
        else if (s[i] == '<')
            str_puts(out, "&lt;");
        else if (s[i] == '>')
            str_puts(out, "&gt;");
        else
            str_putc(out, s[i]);
    }
}

/* Shows whole lines (terminal-safe through term_printf); the rest waits. */
static void show(term_out *out, stream *s, bool all, term_tone tone)
{
    size_t start = 0;
    for (size_t i = 0; i < s->line.len; i++)
        if (s->line.ptr[i] == '\n') {
            term_printf(out, tone, "%.*s\n", (int)(i - start), s->line.ptr + start);
            start = i + 1;
        }
    if (all && start < s->line.len) {
        term_printf(out, tone, "%.*s\n", (int)(s->line.len - start), s->line.ptr + start);
        start = s->line.len;
    }
    loom_str rest = LOOM_STR_INIT;
    str_append(&rest, s->line.ptr ? s->line.ptr + start : "", s->line.len - start);
    str_free(&s->line);
    s->line = rest;
}

static void take(stream *s, const char *buf, size_t n)
{
    size_t room = s->kept.len < BANG_OUTPUT_CAP ? BANG_OUTPUT_CAP - s->kept.len : 0;
    size_t keep = n < room ? n : room;
    str_append(&s->kept, buf, keep);
    s->dropped += n - keep;
    str_append(&s->line, buf, n);
}

static void put_stream(loom_str *block, const char *tag, stream *s)
{
    size_t n = s->kept.len;
    while (n && (s->kept.ptr[n - 1] == '\n' || s->kept.ptr[n - 1] == '\r'))
        n--;
    str_printf(block, "<%s>", tag);
    xml_escape(block, s->kept.ptr ? s->kept.ptr : "", n);
    if (s->dropped)
        str_printf(block, "\n… (%zu more bytes not kept)", s->dropped);
    str_printf(block, "</%s>", tag);
}

char *bang_run(term_out *out, const char *cwd, const char *cmd)
{
    fflush(stdout);
    stream so = {.fd = -1}, se = {.fd = -1};
    int po[2] = {-1, -1}, pe[2] = {-1, -1};
    pid_t pid = -1;
    if (pipe(po) == 0 && pipe(pe) == 0)
        pid = fork();
    if (pid == 0) {
        static const int ending[] = {SIGINT, SIGTERM, SIGHUP};
        sig_set(ending, 3, SIG_DFL, 0);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, STDIN_FILENO);
        dup2(po[1], STDOUT_FILENO);
        dup2(pe[1], STDERR_FILENO);
        close(po[0]);
        close(pe[0]);
        if (chdir(cwd) != 0)
            _exit(126);
        execl("/bin/bash", "bash", "-c", cmd, (char *)NULL);
        execlp("sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (pid < 0) {
        for (int i = 0; i < 2; i++) {
            if (po[i] >= 0)
                close(po[i]);
            if (pe[i] >= 0)
                close(pe[i]);
        }
        term_printf(out, TONE_RED, "could not start bash: %s\n", strerror(errno));
        str_printf(&se.kept, "Command failed: could not start bash: %s", strerror(errno));
    } else {
        close(po[1]);
        close(pe[1]);
        so.fd = po[0];
        se.fd = pe[0];
        while (so.fd >= 0 || se.fd >= 0) {
            struct pollfd p[2] = {{.fd = so.fd, .events = POLLIN}, {.fd = se.fd, .events = POLLIN}};
            if (poll(p, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            stream *ss[2] = {&so, &se};
            for (int i = 0; i < 2; i++) {
                if (ss[i]->fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                    continue;
                char buf[4096];
                ssize_t n = read(ss[i]->fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0) {
                    close(ss[i]->fd);
                    ss[i]->fd = -1;
                    continue;
                }
                take(ss[i], buf, (size_t)n);
                show(out, ss[i], false, i ? TONE_RED : TONE_PLAIN);
            }
        }
        if (so.fd >= 0)
            close(so.fd);
        if (se.fd >= 0)
            close(se.fd);
        show(out, &so, true, TONE_PLAIN);
        show(out, &se, true, TONE_RED);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
            term_printf(out, TONE_RED, "exit %d\n", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
            term_printf(out, TONE_RED, "killed by signal %d\n", WTERMSIG(status));
    }
    loom_str block = LOOM_STR_INIT;
    str_puts(&block, "<bash-input>");
    xml_escape(&block, cmd, strlen(cmd));
    str_puts(&block, "</bash-input>\n");
    put_stream(&block, "bash-stdout", &so);
    put_stream(&block, "bash-stderr", &se);
    str_free(&so.kept);
    str_free(&se.kept);
    str_free(&so.line);
    str_free(&se.line);
    return str_steal(&block);
}
