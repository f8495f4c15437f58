/* doctor.c — `loom doctor` (doctor.h): builds the config and the agent a
 * run here would get, from the same options and settings, and prints what
 * they hold. Nothing is started: no session, no MCP server, no model call.
 * Also the file list /status shows (doctor_print_sources), and /doctor:
 * the same report for the REPL's agent (doctor_show_agent).
 *
 * The main thread only. */
#include "surfaces/cli/doctor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "base/json.h"
#include "base/str.h"
#include "loom.h"
#include "surfaces/cli/options.h"
#include "surfaces/cli/setup.h"

static void doctor_usage(FILE *f)
{
    fputs("usage: loom doctor [--json] [options]\n"
          "\n"
          "Shows what loom started here with these options would use: the provider and\n"
          "model, whether the workspace is trusted, whether Claude Code's files count,\n"
          "the sandbox, every configuration file loaded, partly loaded or skipped (and\n"
          "why), and the warnings of the settings and the extensions. Starts nothing.\n"
          "The options are loom's own (--cwd DIR, --model, --mcp-config, ...; loom --help).\n"
          "\n"
          "  --json      the report as one JSON document\n"
          "  -h, --help  this help\n"
          "\n"
          "Exit status: 0; 1 when the settings cannot be loaded; 2 on a usage error.\n",
          f);
}

static json_t *parse_owned(char *text)
{
    loom_error ignore;
    json_t *doc = text ? json_parse(text, strlen(text), "report", &ignore) : NULL;
    free(text);
    return doc;
}

static void print_list(term_out *t, const char *title, const json_t *list)
{
    if (!json_array_size(list))
        return;
    term_printf(t, TONE_BOLD, "%s\n", title);
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v)
        term_printf(t, TONE_YELLOW, "  %s\n", json_is_string(v) ? json_string_value(v) : "?");
}

static void print_sources_doc(term_out *t, const json_t *doc)
{
    if (json_is_true(json_object_get(doc, "trusted")))
        term_printf(t, TONE_GREEN, "Trust     the workspace is trusted\n");
    else
        term_printf(t, TONE_YELLOW, "Trust     the workspace is not trusted: its own settings only "
                    "tighten, its hooks do not run\n");
    term_printf(t, TONE_PLAIN, "Compat    Claude Code files %s\n",
                json_is_true(json_object_get(doc, "compat_claude"))
                    ? "on"
                    : "off (their deny and ask rules still apply)");
    const json_t *files = json_get_arr(doc, "files");
    term_printf(t, TONE_BOLD, "Configuration files");
    term_printf(t, TONE_DIM, " (state, kind, level, origin, path)\n");
    if (!json_array_size(files))
        term_printf(t, TONE_DIM, "  none found\n");
    size_t i;
    json_t *f;
    json_array_foreach(files, i, f) {
        const char *state = json_get_str(f, "state", "?");
        term_tone tone = !strcmp(state, "loaded") ? TONE_GREEN
                         : !strcmp(state, "partial") ? TONE_YELLOW : TONE_DIM;
        term_printf(t, tone, "  %-8s", state);
        term_printf(t, TONE_PLAIN, " %-8s %-7s %-6s %s\n", json_get_str(f, "kind", "?"),
                    json_get_str(f, "level", "?"), json_get_str(f, "origin", "?"),
                    json_get_str(f, "path", "?"));
        const char *why = json_get_str(f, "why", NULL);
        if (why)
            term_printf(t, TONE_DIM, "           %s\n", why);
    }
    print_list(t, "Settings warnings", json_get_arr(doc, "warnings"));
    print_list(t, "Workspace trust notices", json_get_arr(doc, "notices"));
}

void doctor_print_sources(term_out *t, const char *sources_json)
{
    if (!sources_json)
        return;
    loom_error ignore;
    json_t *doc = json_parse(sources_json, strlen(sources_json), "sources", &ignore);
    if (doc)
        print_sources_doc(t, doc);
    json_decref(doc);
}

/* The extensions' report (NULL until the agent gives one): counts, then
 * its warnings and notices. */
static void print_extensions(term_out *t, const json_t *ext)
{
    term_printf(t, TONE_BOLD, "Extensions");
    if (!json_is_object(ext)) {
        term_printf(t, TONE_DIM, "  no report from this agent\n");
        return;
    }
    static const char *const kinds[] = {"skills", "commands", "output_styles", "plugins"};
    loom_str line = LOOM_STR_INIT;
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
        str_printf(&line, "%s%zu %s", i ? " \xc2\xb7 " : "  ",
                   json_array_size(json_get_arr(ext, kinds[i])), kinds[i]);
    term_printf(t, TONE_PLAIN, "%s\n", str_cstr(&line));
    str_free(&line);
    print_list(t, "Extension warnings", json_get_arr(ext, "warnings"));
    print_list(t, "Extension notices", json_get_arr(ext, "notices"));
}

/* The whole report, as text. */
static void print_report(term_out *t, const json_t *r)
{
    const json_t *src = json_object_get(r, "sources");
    term_printf(t, TONE_BOLD, "loom doctor");
    term_printf(t, TONE_DIM, "  loom %s\n", loom_version());
    term_printf(t, TONE_PLAIN, "Cwd       %s\n", json_get_str(r, "workspace", "?"));
    const char *provider = json_get_str(r, "provider", NULL);
    const char *provider_error = json_get_str(r, "provider_error", NULL);
    if (provider_error) {
        term_printf(t, TONE_YELLOW, "Provider  none: %s\n", provider_error);
    } else if (provider) {
        term_printf(t, TONE_PLAIN, "Provider  %s\n", provider);
        term_printf(t, TONE_PLAIN, "Model     %s\n", json_get_str(r, "model", "?"));
    }
    const char *agent_error = json_get_str(r, "agent_error", NULL);
    if (agent_error)
        term_printf(t, TONE_RED, "Settings  %s\n", agent_error);
    const json_t *sb = json_object_get(r, "sandbox");
    if (json_is_true(json_object_get(sb, "supported")))
        term_printf(t, TONE_PLAIN, "Sandbox   supported (Landlock ABI %lld)",
                    (long long)json_integer_value(json_object_get(sb, "abi")));
    else
        term_printf(t, TONE_YELLOW, "Sandbox   not supported here: %s",
                    json_get_str(sb, "why", "?"));
    const json_t *agent_sb = json_object_get(src, "sandbox");
    const char *sb_error = json_get_str(agent_sb, "error", NULL);
    if (sb_error)
        term_printf(t, TONE_RED, "; the settings are invalid: %s\n", sb_error);
    else if (agent_sb)
        term_printf(t, TONE_PLAIN, "; commands %s\n",
                    json_is_true(json_object_get(agent_sb, "enabled"))
                        ? "run sandboxed"
                        : "run unsandboxed (\"sandbox\": {\"enabled\": true} turns it on)");
    else
        term_printf(t, TONE_PLAIN, "\n");
    const json_t *term = json_object_get(r, "terminal");
    if (term) {
        term_printf(t, TONE_PLAIN, "Terminal  %s", json_get_str(term, "term", "?"));
        if (!json_is_true(json_object_get(term, "tty")))
            term_printf(t, TONE_PLAIN, ", not a terminal\n");
        else
            term_printf(t, TONE_PLAIN, ", %lld columns, colour %s\n",
                        (long long)json_get_int(term, "columns", 0),
                        json_is_true(json_object_get(term, "color")) ? "on" : "off (NO_COLOR)");
    }
    print_sources_doc(t, src);
    print_extensions(t, json_object_get(r, "extensions"));
}

/* The report's first fields: the folder and whether the sandbox works here. */
static json_t *report_new(const char *workspace)
{
    json_t *r = json_object();
    json_object_set_new(r, "workspace", json_string(workspace));
    const char *why = NULL;
    int abi = loom_sandbox_probe(&why);
    json_t *sb = json_pack("{s:b}", "supported", abi > 0);
    if (abi > 0)
        json_object_set_new(sb, "abi", json_integer(abi));
    else
        json_object_set_new(sb, "why", json_string(why ? why : "unknown"));
    json_object_set_new(r, "sandbox", sb);
    return r;
}

/* What an agent that could be made says: provider, model, files, extensions. */
static void report_agent(json_t *r, loom_agent *agent)
{
    if (!json_object_get(r, "provider_error")) {
        json_object_set_new(r, "provider", json_string(loom_agent_provider(agent)));
        json_object_set_new(r, "model", json_string(loom_agent_model(agent)));
    }
    json_object_set_new(r, "sources", parse_owned(loom_agent_sources_json(agent)));
    json_t *ext = parse_owned(loom_agent_extensions_json(agent));
    json_object_set_new(r, "extensions", ext ? ext : json_null());
}

/* The terminal the text report goes to: TERM, colour, width. */
static void report_terminal(json_t *r)
{
    const char *term = getenv("TERM");
    struct winsize ws;
    int cols = isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 ? ws.ws_col : 0;
    json_object_set_new(r, "terminal",
                        json_pack("{s:s,s:b,s:b,s:i}", "term", term && *term ? term : "(unset)",
                                  "tty", isatty(STDOUT_FILENO), "color",
                                  isatty(STDOUT_FILENO) && !getenv("NO_COLOR"), "columns", cols));
}

void doctor_show_agent(term_out *t, loom_agent *agent, const char *cwd)
{
    json_t *r = report_new(cwd);
    report_agent(r, agent);
    report_terminal(r);
    print_report(t, r);
    json_decref(r);
}

/* Drops --json from argv (in place); whether it was there. */
static bool take_json_flag(int *argc, char **argv)
{
    bool found = false;
    int out = 0;
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--json") == 0 && i > 0)
            found = true;
        else
            argv[out++] = argv[i];
    }
    *argc = out;
    return found;
}

int doctor_cmd_main(int argc, char **argv)
{
    bool as_json = take_json_flag(&argc, argv);
    cli_options opt;
    if (cli_parse(argc, argv, &opt) != 0)
        return 2;
    if (opt.help) {
        doctor_usage(stdout);
        return 0;
    }
    if (opt.prompt || opt.print || opt.version) {
        fprintf(stderr, "loom doctor: takes no prompt (see loom doctor --help)\n");
        return 2;
    }
    loom_status st;
    loom_config *cfg = setup_config(&opt, false, NULL, &st);
    if (!cfg) {
        fprintf(stderr, "loom doctor: the settings cannot be loaded: %s\n", st.message);
        return 1;
    }
    json_t *r = report_new(loom_config_workspace(cfg));
    int status = 0;
    loom_agent *agent = loom_agent_new(cfg, &st);
    if (!agent) {
        /* No provider (no API key here) is something to report, not a
         * settings failure: the same settings with the offline provider
         * tell the two apart, and give the rest of the report. */
        char first[sizeof st.message];
        snprintf(first, sizeof first, "%s", st.message);
        cli_options offline = opt;
        offline.provider = "replay";
        offline.cassette = "/dev/null";
        loom_config *cfg2 = setup_config(&offline, false, NULL, &st);
        loom_agent *a2 = cfg2 ? loom_agent_new(cfg2, &st) : NULL;
        loom_config_free(cfg2);
        if (a2) {
            json_object_set_new(r, "provider_error", json_string(first));
            agent = a2;
        }
    }
    if (agent) {
        report_agent(r, agent);
    } else {
        /* A value in the settings the agent refuses: the settings failed. */
        json_object_set_new(r, "agent_error", json_string(st.message));
        json_object_set_new(r, "sources", parse_owned(loom_config_sources_json(cfg)));
        json_object_set_new(r, "extensions", json_null());
        status = 1;
    }
    if (as_json) {
        char *text = json_dump_compact(r);
        printf("%s\n", text);
        free(text);
    } else {
        report_terminal(r);
        term_out t = {.lock = PTHREAD_MUTEX_INITIALIZER,
                      .color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR"),
                      .spin = NULL};
        print_report(&t, r);
    }
    json_decref(r);
    loom_agent_free(agent);
    loom_config_free(cfg);
    return status;
}
