/* trust_prompt.c — the REPL's workspace trust question (trust_prompt.h).
 *
 * Asked once per folder, before the agent is made from the settings, so
 * nothing a repository's settings say has loosened anything yet: the
 * config it is shown was loaded untrusted (tighten-only). "y" records the
 * folder in the user settings' trustedWorkspaces and loads the settings
 * again, trusted; "n", Esc, Enter, Ctrl-C or Ctrl-D keep it untrusted for
 * this start (and the question comes back on the next one).
 *
 * Runs on the main thread before the REPL's terminal handling starts; it
 * puts the terminal in non-canonical mode only for the one key and always
 * restores it. */
#include "surfaces/cli/trust_prompt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "base/str.h"
#include "base/termsafe.h"
#include "surfaces/cli/setup.h"

/* The most ignored settings listed; the rest are counted. */
#define TRUST_PROMPT_LIST 8

/* One key from the terminal: 'y' or 'n' ('n' for every way of saying no,
 * end of input included). Keys that are neither are ignored. */
static int read_answer(void)
{
    struct termios old, raw;
    bool tty = tcgetattr(STDIN_FILENO, &old) == 0;
    if (tty) {
        raw = old;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG);
        raw.c_cc[VMIN] = 1;
        raw.c_cc[VTIME] = 0;
        tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    }
    int answer = 'n';
    for (;;) {
        unsigned char c;
        ssize_t n = read(STDIN_FILENO, &c, 1);
        if (n <= 0)
            break;
        if (c == 'y' || c == 'Y') {
            answer = 'y';
            break;
        }
        /* n, Esc, Enter, Ctrl-C, Ctrl-D */
        if (c == 'n' || c == 'N' || c == 0x1b || c == '\r' || c == '\n' || c == 0x03 ||
            c == 0x04)
            break;
    }
    if (tty)
        tcsetattr(STDIN_FILENO, TCSANOW, &old);
    return answer;
}

/* A repository's key names and values, and the folder's own name, are
 * outside text: a C1 CSI or a bidi override in them would redraw or reorder
 * the very question the person answers. Shown visibly (termsafe.h); a
 * newline in them would pass for a line of the list, so it shows as "^J". */
static void put_safe(const char *s, size_t n)
{
    loom_str out = LOOM_STR_INIT;
    termsafe_append(&out, s, n);
    for (size_t i = 0; i < out.len; i++)
        if (out.ptr[i] == '\n')
            fputs("^J", stdout);
        else
            putchar(out.ptr[i]);
    str_free(&out);
}

/* "ignored FILE: KEY VALUE — hint" without the frame: "FILE: KEY VALUE". */
static void put_item(const char *notice)
{
    const char *s = notice;
    if (!strncmp(s, "ignored ", 8))
        s += 8;
    const char *end = strstr(s, " \xe2\x80\x94 ");
    size_t n = end ? (size_t)(end - s) : strlen(s);
    printf("    ");
    put_safe(s, n);
    printf("\n");
}

loom_config *trust_prompt_ask(const cli_options *opt, loom_config *cfg, loom_status *st)
{
    size_t n = loom_config_notice_count(cfg);
    if (loom_config_workspace_trusted(cfg) || n == 0 || !isatty(STDIN_FILENO))
        return cfg;
    const char *ws = loom_config_workspace(cfg);
    printf("\nDo you trust the files in this folder?\n\n    ");
    put_safe(ws, strlen(ws));
    printf("\n\nIts settings files ask for what only a trusted folder may have:\n");
    for (size_t i = 0; i < n && i < TRUST_PROMPT_LIST; i++)
        put_item(loom_config_notice(cfg, i));
    if (n > TRUST_PROMPT_LIST)
        printf("    \xe2\x80\xa6 and %zu more\n", n - TRUST_PROMPT_LIST);
    printf("\nA trusted folder's settings can loosen your limits: allow rules, permission "
           "modes,\nhooks that run commands, the sandbox, environment variables, the model "
           "endpoint.\n"
           "  y  trust this folder (remembered in %s)\n"
           "  n  continue untrusted: only settings that tighten apply (Esc too)\n"
           "Trust this folder? [y/N] \xe2\x80\xba ",
           loom_config_user_settings_path(cfg));
    fflush(stdout);
    int answer = read_answer();
    printf("%c\n", answer);
    if (answer != 'y') {
        printf("Continuing untrusted: the settings above are ignored.\n\n");
        fflush(stdout);
        return cfg;
    }
    if (loom_config_trust_workspace(cfg, st) != 0) {
        printf("The folder could not be trusted: %s\nContinuing untrusted.\n\n", st->message);
        fflush(stdout);
        return cfg;
    }
    printf("Trusted: recorded in %s.\n\n", loom_config_user_settings_path(cfg));
    fflush(stdout);
    loom_config_free(cfg);
    return setup_config(opt, true, NULL, st);
}

const char *trust_prompt_mode_notice(const char *mode)
{
    if (!mode)
        return NULL;
    if (!strcmp(mode, "plan"))
        return "permission mode plan: read-only, nothing is changed until you leave plan mode";
    if (!strcmp(mode, "acceptEdits"))
        return "permission mode acceptEdits: file edits in the workspace run without asking";
    if (!strcmp(mode, "bypassPermissions"))
        return "permission mode bypassPermissions: tools run without asking (deny and ask "
               "rules still hold)";
    if (!strcmp(mode, "fullAccess"))
        return "permission mode fullAccess: tools run without asking, ask rules included";
    return NULL;
}
