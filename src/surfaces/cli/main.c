/* main.c — the loom program: parses the command line and hands off to a
 * surface: headless print mode (-p), or the REPL when a person is at the
 * terminal. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "loom.h"
#include "surfaces/cli/doctor.h"
#include "surfaces/cli/evolve_cmd.h"
#include "surfaces/cli/mcp_cmd.h"
#include "surfaces/cli/memory_cmd.h"
#include "surfaces/cli/options.h"
#include "surfaces/cli/plugin_cmd.h"
#include "surfaces/cli/print_mode.h"
#include "surfaces/cli/repl.h"
#include "surfaces/cli/sandbox_cmd.h"
#include "surfaces/cli/sibling_cmd.h"
#include "surfaces/cli/signal_cmd.h"
#include "surfaces/cli/stats_cmd.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "sandbox") == 0)
        return sandbox_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "mcp") == 0)
        return mcp_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "doctor") == 0)
        return doctor_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "plugin") == 0)
        return plugin_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return sibling_cmd_exec("loom-serve", argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "acp") == 0)
        return sibling_cmd_exec("loom-acp", argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "signal") == 0)
        return signal_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "evolve") == 0)
        return evolve_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "stats") == 0)
        return stats_cmd_main(argc - 1, argv + 1);
    if (argc > 1 && strcmp(argv[1], "memory") == 0)
        return memory_cmd_main(argc - 1, argv + 1);
    cli_options opt;
    if (cli_parse(argc, argv, &opt) != 0)
        return 2;
    if (opt.help) {
        cli_usage(stdout);
        return 0;
    }
    if (opt.version) {
        printf("loom %s\n", loom_version());
        return 0;
    }
    if (!opt.print && !isatty(STDIN_FILENO)) {
        fprintf(stderr, "loom: the interactive mode needs a terminal on stdin; "
                        "use loom -p \"prompt\" (see loom --help)\n");
        return 2;
    }
    log_init();
    int status = opt.print ? print_mode_run(&opt) : repl_main(&opt);
    log_close();
    return status;
}
