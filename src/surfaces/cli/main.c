/* main.c — the loom program: parses the command line and hands off to a
 * surface (today: headless print mode). */
#include <stdio.h>

#include "base/log.h"
#include "loom.h"
#include "surfaces/cli/options.h"
#include "surfaces/cli/print_mode.h"

int main(int argc, char **argv)
{
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
    if (!opt.print) {
        fprintf(stderr, "loom: the interactive terminal is not in this build yet; "
                        "use loom -p \"prompt\" (see loom --help)\n");
        return 2;
    }
    log_init();
    int status = print_mode_run(&opt);
    log_close();
    return status;
}
