/* doctor.h — `loom doctor [options]`: what a loom started here with these
 * options would use — provider and model, workspace trust, Claude Code
 * compatibility, the sandbox, every configuration file loaded, partly
 * loaded or skipped (with why), and the settings' and extensions' warnings
 * — and the same file list for the REPL's /status. docs/cli.md. */
#ifndef LOOM_CLI_DOCTOR_H
#define LOOM_CLI_DOCTOR_H

#include "loom.h"
#include "surfaces/cli/term_out.h"

/* argv[0] is "doctor"; the other arguments are loom's own options (--cwd,
 * --model, --mcp-config, …) plus --json (the report as one JSON document).
 * Returns 0, or 1 when the settings cannot be loaded (the error printed),
 * 2 on a usage error. */
int doctor_cmd_main(int argc, char **argv);

/* Prints sources_json's files (loom_config_sources_json's or
 * loom_agent_sources_json's document) as an indented list, one file a
 * line — state, kind, level, origin, path — with why below a partial or
 * skipped one, then its warnings and notices. Nothing for NULL. */
void doctor_print_sources(term_out *t, const char *sources_json);

/* The REPL's /doctor: the same report for the agent the REPL runs (cwd: its
 * folder), with the terminal it runs in. */
void doctor_show_agent(term_out *t, loom_agent *agent, const char *cwd);

#endif
