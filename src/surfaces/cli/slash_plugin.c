/* slash_plugin.c — /plugin (see slash_plugin.h). The words are
 * plugin_cmd.c's, printed on the REPL's terminal; after a change the
 * agent is made again (reopen), so the plugin's commands, agents, skills,
 * hooks and MCP servers come or go in this same conversation. */
#include "surfaces/cli/slash_plugin.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "surfaces/cli/plugin_cmd.h"

#define PLUGIN_MAX_WORDS 8

static void to_term(void *ctx, int tone, const char *text)
{
    slash_host *h = ctx;
    term_printf(&h->out, (term_tone)tone, "%s\n", text);
}

void slash_plugin(slash_host *h, const char *args)
{
    char *copy = xstrdup(args ? args : "");
    char *words[PLUGIN_MAX_WORDS];
    int n = 0;
    for (char *save = NULL, *w = strtok_r(copy, " \t", &save); w && n < PLUGIN_MAX_WORDS;
         w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    loom_status st;
    loom_config *cfg = loom_config_new();
    if (loom_config_set(cfg, "cwd", h->cwd, &st) != 0 ||
        loom_config_load_settings(cfg, &st) != 0) {
        term_printf(&h->out, TONE_RED, "%s\n", st.message);
        loom_config_free(cfg);
        free(copy);
        return;
    }
    plugin_out o = {to_term, h};
    bool changed = false;
    plugin_cmd_run(cfg, n, words, &o, &changed);
    loom_config_free(cfg);
    free(copy);
    if (!changed)
        return;
    if (h->ops->reopen && h->ops->reopen(h, NULL, &st) == 0)
        term_printf(&h->out, TONE_DIM, "Applied: this session now has the plugins as they are.\n");
    else
        term_printf(&h->out, TONE_YELLOW, "Restart loom to apply it%s%s\n",
                    h->ops->reopen ? ": " : "", h->ops->reopen ? st.message : "");
}
