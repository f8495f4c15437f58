/* slash.c — the REPL's /commands, a table of name → handler. Commands that
 * change the conversation (/clear, /resume, /fork, /model) swap the session
 * handle through the slash_host (slash_host.h); they never touch what the session holds except
 * through loom.h. */
#include "surfaces/cli/slash.h"

#include <dirent.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/json.h"
#include "base/path.h"
#include "base/str.h"
#include "surfaces/cli/doctor.h"
#include "surfaces/cli/fold.h"
#include "surfaces/cli/session_picker.h"
#include "surfaces/cli/slash_agents.h"
#include "surfaces/cli/slash_config.h"
#include "surfaces/cli/slash_context.h"
#include "surfaces/cli/slash_knowledge.h"
#include "surfaces/cli/slash_export.h"
#include "surfaces/cli/slash_ext.h"
#include "surfaces/cli/slash_mcp.h"
#include "surfaces/cli/slash_model.h"
#include "surfaces/cli/slash_style.h"
#include "surfaces/cli/slash_plugin.h"


typedef struct slash_cmd {
    const char *name;
    const char *args;
    const char *help;
    void (*run)(slash_host *r, const char *args);
} slash_cmd;

static void cmd_help(slash_host *r, const char *args);

/* "1,234,567" */
void slash_thousands(long long n, char *buf, size_t size)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%lld", n < 0 ? -n : n);
    size_t len = strlen(digits), k = 0;
    if (n < 0 && k + 1 < size)
        buf[k++] = '-';
    for (size_t i = 0; i < len && k + 2 < size; i++) {
        if (i && (len - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
}

static void cmd_clear(slash_host *r, const char *args)
{
    (void)args;
    loom_status st;
    loom_session *s = loom_session_new(r->agent, &st);
    if (!s) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
        return;
    }
    r->ops->switch_session(r, s, false);
    if (isatty(STDOUT_FILENO))
        term_write_control(&r->out, "\x1b[H\x1b[2J\x1b[3J");
    r->ops->header(r);
    term_printf(&r->out, TONE_DIM, "New session %s\n", loom_session_id(s));
}

/* /resume: no argument opens the picker; N (a number) is the N-th session
 * of the list; anything else is an id or a unique prefix of one. */
static void cmd_resume(slash_host *r, const char *args)
{
    const char *current = loom_session_id(r->session);
    char *list = NULL, *id = NULL;
    if (!*args || strspn(args, "0123456789") == strlen(args))
        list = loom_sessions_json(r->agent, current);
    if (!*args) {
        term_printf(&r->out, TONE_BOLD, "Recent sessions in %s\n", r->cwd);
        bool cancelled = false;
        id = picker_choose(&r->out, list, current, &cancelled);
        if (!id) {
            term_printf(&r->out, TONE_DIM, cancelled ? "Cancelled\n"
                                                     : "/resume N or /resume ID opens one\n");
            free(list);
            return;
        }
    } else {
        id = picker_nth(list, args);
    }
    free(list);
    loom_status st;
    loom_session *s = loom_session_resume(r->agent, id ? id : args, &st);
    free(id);
    if (!s) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
        return;
    }
    r->ops->switch_session(r, s, false);
    slash_show_resumed(r);
}

void slash_show_resumed(slash_host *r)
{
    char *list = loom_sessions_json(r->agent, loom_session_id(r->session));
    loom_error ignore;
    json_t *arr = json_parse(list ? list : "[]", list ? strlen(list) : 2, "sessions", &ignore);
    const char *title = NULL;
    size_t k;
    json_t *o;
    json_array_foreach(arr, k, o)
        if (!strcmp(json_get_str(o, "id", ""), loom_session_id(r->session)))
            title = json_get_str(o, "title", NULL);
    term_printf(&r->out, TONE_DIM, "Resumed session %s%s%s\n", loom_session_id(r->session),
                title ? " \xc2\xb7 " : "", title ? title : "");
    json_decref(arr);
    free(list);
    char *conv = loom_session_conversation_json(r->session);
    picker_show_recent(&r->out, conv);
    free(conv);
}

/* A new agent for the model; the conversation goes on in the same file
 * (loom.h binds a session to its agent, so the session is reopened). */
static void cmd_status(slash_host *r, const char *args)
{
    (void)args;
    term_printf(&r->out, TONE_PLAIN, "Session   %s\n", loom_session_id(r->session));
    term_printf(&r->out, TONE_PLAIN, "File      %s\n", loom_session_path(r->session));
    term_printf(&r->out, TONE_PLAIN, "Model     %s\n", loom_agent_model(r->agent));
    term_printf(&r->out, TONE_PLAIN, "Provider  %s\n", loom_agent_provider(r->agent));
    term_printf(&r->out, TONE_PLAIN, "Cwd       %s\n", r->cwd);
    /* The session's, not the flag's: /permissions and /plan change it. */
    term_printf(&r->out, TONE_PLAIN, "Mode      %s\n", loom_session_permission_mode(r->session));
    term_printf(&r->out, TONE_PLAIN, "Version   loom %s\n", loom_version());
    /* Every configuration file found, and what counted of it (docs/compat.md). */
    char *sources = loom_agent_sources_json(r->agent);
    doctor_print_sources(&r->out, sources);
    free(sources);
}

static void cmd_rewind(slash_host *r, const char *args)
{
    int n = 1;
    if (*args) {
        char *end;
        long v = strtol(args, &end, 10);
        if (*end || v < 1 || v > 100000) {
            term_printf(&r->out, TONE_YELLOW, "usage: /rewind [N] \xe2\x80\x94 N user turns to undo (default 1)\n");
            return;
        }
        n = (int)v;
    }
    char *report = NULL;
    loom_status st;
    if (loom_session_rewind(r->session, n, &report, &st) != 0) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
        return;
    }
    term_printf(&r->out, TONE_GREEN, "Rewound %d turn%s.\n", n, n == 1 ? "" : "s");
    term_printf(&r->out, TONE_PLAIN, "%s%s", report ? report : "",
                report && *report && report[strlen(report) - 1] != '\n' ? "\n" : "");
    free(report);
}

static void cmd_fork(slash_host *r, const char *args)
{
    (void)args;
    loom_status st;
    loom_session *s = loom_session_fork(r->session, &st);
    if (!s) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
        return;
    }
    char *from = xstrdup(loom_session_id(r->session));
    r->ops->switch_session(r, s, true);
    term_printf(&r->out, TONE_PLAIN, "Forked into session %s", loom_session_id(s));
    term_printf(&r->out, TONE_DIM, " (from %s; /resume %s goes back)\n", from, from);
    free(from);
}

/* seed 001 §14.1: the eight modes with their official descriptions. The
 * library checks the names (loom_session_set_permission_mode); this table
 * only explains them. */
static const struct {
    const char *name;
    const char *about;
} modes[] = {
    {"default", "Prompts for permission on first use of each tool"},
    {"acceptEdits", "Automatically accepts file edit permissions for the session"},
    {"plan", "Can analyze but not modify files or execute commands"},
    {"auto", "An AI classifier reviews actions that would normally prompt: safe ones are "
             "auto-approved, risky ones are denied"},
    {"dontAsk", "Never shows permission prompts; runs pre-approved and safe actions, denies "
                "anything that would require approval"},
    {"bypassPermissions", "Skips all permission prompts"},
    {"fullAccess", "Skips ALL permission checks including dangerous commands"},
    {"delegate", "Permissions managed by parent session"},
};

static void show_modes(slash_host *r)
{
    const char *now = loom_session_permission_mode(r->session);
    term_printf(&r->out, TONE_PLAIN, "Permission mode: ");
    term_printf(&r->out, TONE_BOLD, "%s\n", now);
    /* Descriptions wrap at spaces into the room the name column leaves, so
     * the names stay a column of their own. */
    int room = term_columns() - 23;
    if (room < 20)
        room = 20;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        bool current = !strcmp(modes[i].name, now);
        term_printf(&r->out, current ? TONE_BOLD : TONE_PLAIN, "%s %-19s", current ? "\xe2\x97\x8f" : " ",
                    modes[i].name);
        const char *d = modes[i].about;
        for (bool first = true; *d; first = false) {
            int n = (int)strlen(d);
            if (n > room) {
                n = room;
                while (n > 0 && d[n] != ' ')
                    n--;
                if (n == 0)
                    n = room;
            }
            term_printf(&r->out, TONE_DIM, "%s %.*s\n", first ? "" : "                     ", n, d);
            d += n;
            d += strspn(d, " ");
        }
    }
    term_printf(&r->out, TONE_DIM, "/permissions MODE switches, from the next tool call on\n"
                "/plan enters plan mode, /plan off leaves it\n");
}

static void set_mode(slash_host *r, const char *mode)
{
    const char *before = loom_session_permission_mode(r->session);
    loom_status st;
    if (loom_session_set_permission_mode(r->session, mode, &st) != 0) {
        term_printf(&r->out, TONE_RED, "%s\n", st.message);
        return;
    }
    const char *now = loom_session_permission_mode(r->session);
    term_printf(&r->out, TONE_PLAIN, "Permission mode: ");
    term_printf(&r->out, TONE_BOLD, "%s", now);
    term_printf(&r->out, TONE_DIM, "%s%s%s\n", strcmp(before, now) ? " (was " : " (unchanged",
                strcmp(before, now) ? before : "", ")");
    if (!strcmp(now, "plan"))
        term_printf(&r->out, TONE_DIM, "Tools that change files or run commands are denied \xc2\xb7 "
                    "/plan off goes back\n");
}

static void leave_plan(slash_host *r)
{
    loom_status st;
    if (loom_session_leave_plan(r->session, &st) != 0) {
        term_printf(&r->out, TONE_YELLOW, "%s\n", st.message);
        return;
    }
    term_printf(&r->out, TONE_PLAIN, "Left plan mode \xc2\xb7 permission mode: ");
    term_printf(&r->out, TONE_BOLD, "%s\n", loom_session_permission_mode(r->session));
}

static void cmd_permissions(slash_host *r, const char *args)
{
    if (!*args)
        show_modes(r);
    else if (!strcmp(args, "leave-plan"))
        leave_plan(r);
    else
        set_mode(r, args);
}

static void cmd_plan(slash_host *r, const char *args)
{
    if (!*args || !strcmp(args, "on"))
        set_mode(r, "plan");
    else if (!strcmp(args, "off"))
        leave_plan(r);
    else
        term_printf(&r->out, TONE_YELLOW, "usage: /plan enters plan mode, /plan off leaves it\n");
}

static void cmd_exit(slash_host *r, const char *args)
{
    (void)args;
    r->quit = true;
}

static const slash_cmd commands[] = {
    {"help", NULL, "list the commands", cmd_help},
    {"clear", NULL, "start a new session (the old one stays on disk)", cmd_clear},
    {"resume", "[N|ID]", "choose one of this directory's sessions, or open one", cmd_resume},
    {"export", "[FILE] [!]", "write the conversation as markdown (! overwrites)", slash_export},
    {"model", "[NAME]", "the models (aliases, windows, prices), or switch to NAME", slash_model},
    {"cost", NULL, "tokens used and their cost in dollars (the dated price table)", slash_cost},
    {"config", "[set KEY V]", "the settings in effect and the file that set each; set: write "
     "one to .loom/settings.local.json", slash_config},
    {"doctor", NULL, "what is configured, found and broken: provider, settings files, sandbox, "
     "extensions, terminal", slash_doctor},
    {"status", NULL, "session id and file, model, provider, directory, mode, the configuration "
     "files loaded and skipped", cmd_status},
    {"permissions", "[MODE]", "show the permission modes, or switch to MODE", cmd_permissions},
    {"plan", "[off]", "enter plan mode (read-only tools); off: back to the mode before", cmd_plan},
    {"compact", "[FOCUS]", "summarize the conversation now; FOCUS says what the summary keeps",
     slash_compact},
    {"context", NULL, "what the context holds: tokens by partition, the next step", slash_context},
    {"events", NULL, "the heartbeat's events: state, urgency, source, summary, id", slash_events},
    {"knowledge", NULL, "external knowledge: sources, active questions, evidence packs, citations",
     slash_knowledge},
    {"memory", "[edit [N]]", "the memory files loaded (CLAUDE.md, AGENTS.md), what was recalled "
     "and why; edit: open one in $EDITOR",
     slash_memory},
    {"rewind", "[N]", "undo the last N turns and the file edits they made", cmd_rewind},
    {"fork", NULL, "continue in a copy of this session", cmd_fork},
    {"mcp", "[reconnect|approve NAME]", "MCP servers: state, tools, errors; reconnect or approve one",
     slash_mcp},
    {"plugin", "[install|list|...]", "plugins and marketplaces: list, install, enable, disable, remove", slash_plugin},
    {"agents", "[show|stop ID|merge]", "sub-agents: what can be spawned, what ran; show, stop, "
     "merge back", slash_agents},
    {"skills", NULL, "the skills: offered to the model or not, and why; their source; warnings",
     slash_skills},
    {"output-style", "[NAME]", "list the output styles, or switch to NAME (kept in "
     ".loom/settings.local.json)", slash_output_style},
    {"expand", "[N]", "print the Nth-last folded result whole (1, the newest, is also Ctrl-O)",
     fold_expand_cmd},
    {"exit", NULL, "quit (also /quit, Ctrl-D)", cmd_exit},
    {"quit", NULL, NULL, cmd_exit},
    {NULL, NULL, NULL, NULL},
};

static void cmd_help(slash_host *r, const char *args)
{
    (void)args;
    term_printf(&r->out, TONE_BOLD, "Commands\n");
    for (const slash_cmd *c = commands; c->name; c++) {
        if (!c->help)
            continue; /* an alias */
        char usage[64];
        snprintf(usage, sizeof usage, "/%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
        term_printf(&r->out, TONE_PLAIN, "  %-19s ", usage); /* a space after a long one too */
        term_printf(&r->out, TONE_DIM, "%s\n", c->help);
    }
    slash_ext_help(r);
    term_printf(&r->out, TONE_BOLD, "Input\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "!command");
    term_printf(&r->out, TONE_DIM, "run a shell command here (not sent to the model)\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "# text");
    term_printf(&r->out, TONE_DIM, "remember text: adds \"- text\" to ./AGENTS.md (not sent to the model)\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "line \\");
    term_printf(&r->out, TONE_DIM, "a trailing backslash continues on the next line\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "//text");
    term_printf(&r->out, TONE_DIM, "send \"/text\" to the model\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "Tab");
    term_printf(&r->out, TONE_DIM, "complete a /command, its argument, or an @path (from this directory)\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "Shift-Tab");
    term_printf(&r->out, TONE_DIM, "next permission mode: default, acceptEdits, plan\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "Ctrl-R");
    term_printf(&r->out, TONE_DIM, "search the history\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "Esc");
    term_printf(&r->out, TONE_DIM, "in a run, interrupt it\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "Ctrl-O");
    term_printf(&r->out, TONE_DIM, "print the last folded result whole (again: the one before)\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "Ctrl-C");
    term_printf(&r->out, TONE_DIM, "clear the line (twice on an empty one: quit); in a run, interrupt it (twice: quit)\n");
    term_printf(&r->out, TONE_PLAIN, "  %-20s", "Ctrl-D");
    term_printf(&r->out, TONE_DIM, "quit (on an empty line)\n");
}

static const slash_cmd *find_builtin(const char *line)
{
    const char *name = line + 1;
    size_t len = strcspn(name, " \t\n");
    for (const slash_cmd *c = commands; c->name; c++)
        if (strlen(c->name) == len && !strncmp(c->name, name, len))
            return c;
    return NULL;
}

bool slash_is_builtin(const char *line)
{
    return line[0] == '/' && find_builtin(line) != NULL;
}

const char *slash_builtin_name(size_t i)
{
    return i < sizeof commands / sizeof commands[0] ? commands[i].name : NULL;
}

void slash_run(slash_host *r, const char *line)
{
    const char *name = line + 1;
    size_t len = strcspn(name, " \t\n");
    const char *args = name + len;
    args += strspn(args, " \t\n");
    for (const slash_cmd *c = commands; c->name; c++)
        if (strlen(c->name) == len && !strncmp(c->name, name, len)) {
            c->run(r, args);
            return;
        }
    term_printf(&r->out, TONE_YELLOW, "Unknown command /%.*s \xc2\xb7 type /help to see the commands\n",
                (int)len, name);
}
