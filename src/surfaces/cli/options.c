/* options.c — parsing the loom command line (flags users know from Claude
 * Code where a flag exists there: -p, --output-format, --resume, --continue,
 * --fork-session, --model, --system-prompt). */
#include "surfaces/cli/options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_OUTPUT_FORMAT = 1000,
    OPT_INPUT_FORMAT,
    OPT_PROVIDER,
    OPT_MODEL,
    OPT_BASE_URL,
    OPT_CASSETTE,
    OPT_SYSTEM_PROMPT,
    OPT_FORK_SESSION,
    OPT_NO_STREAM,
    OPT_MAX_RETRIES,
    OPT_MAX_TURNS,
    OPT_TOKEN_BUDGET,
    OPT_CONTEXT_WINDOW,
    OPT_REASONING_EFFORT,
    OPT_CWD,
    OPT_PERMISSION_MODE,
    OPT_SKIP_PERMISSIONS,
    OPT_FALLBACK_MODEL,
    OPT_APPEND_SYSTEM_PROMPT,
    OPT_VERBOSE,
    OPT_ALLOWED_TOOLS,
    OPT_DISALLOWED_TOOLS,
    OPT_ADD_DIR,
    OPT_THINKING,
    OPT_MCP_CONFIG,
    OPT_STRICT_MCP_CONFIG,
    OPT_AGENTS,
};

static const struct option long_options[] = {
    {"print", no_argument, NULL, 'p'},
    {"version", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"resume", optional_argument, NULL, 'r'},
    {"continue", no_argument, NULL, 'c'},
    {"output-format", required_argument, NULL, OPT_OUTPUT_FORMAT},
    {"input-format", required_argument, NULL, OPT_INPUT_FORMAT},
    {"provider", required_argument, NULL, OPT_PROVIDER},
    {"model", required_argument, NULL, OPT_MODEL},
    {"base-url", required_argument, NULL, OPT_BASE_URL},
    {"cassette", required_argument, NULL, OPT_CASSETTE},
    {"system-prompt", required_argument, NULL, OPT_SYSTEM_PROMPT},
    {"fork-session", no_argument, NULL, OPT_FORK_SESSION},
    {"no-stream", no_argument, NULL, OPT_NO_STREAM},
    {"max-retries", required_argument, NULL, OPT_MAX_RETRIES},
    {"max-turns", required_argument, NULL, OPT_MAX_TURNS},
    {"token-budget", required_argument, NULL, OPT_TOKEN_BUDGET},
    {"context-window", required_argument, NULL, OPT_CONTEXT_WINDOW},
    {"reasoning-effort", required_argument, NULL, OPT_REASONING_EFFORT},
    {"cwd", required_argument, NULL, OPT_CWD},
    {"permission-mode", required_argument, NULL, OPT_PERMISSION_MODE},
    {"dangerously-skip-permissions", no_argument, NULL, OPT_SKIP_PERMISSIONS},
    {"fallback-model", required_argument, NULL, OPT_FALLBACK_MODEL},
    {"append-system-prompt", required_argument, NULL, OPT_APPEND_SYSTEM_PROMPT},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {"allowedTools", required_argument, NULL, OPT_ALLOWED_TOOLS},
    {"allowed-tools", required_argument, NULL, OPT_ALLOWED_TOOLS},
    {"disallowedTools", required_argument, NULL, OPT_DISALLOWED_TOOLS},
    {"disallowed-tools", required_argument, NULL, OPT_DISALLOWED_TOOLS},
    {"add-dir", required_argument, NULL, OPT_ADD_DIR},
    {"thinking", optional_argument, NULL, OPT_THINKING},
    {"mcp-config", required_argument, NULL, OPT_MCP_CONFIG},
    {"strict-mcp-config", no_argument, NULL, OPT_STRICT_MCP_CONFIG},
    {"agents", required_argument, NULL, OPT_AGENTS},
    {NULL, 0, NULL, 0},
};

/* seed 001 §14.1: the eight permission modes. */
static bool valid_mode(const char *m)
{
    static const char *const modes[] = {"default", "acceptEdits", "plan", "auto", "dontAsk",
                                        "bypassPermissions", "fullAccess", "delegate", NULL};
    for (size_t i = 0; modes[i]; i++)
        if (!strcmp(m, modes[i]))
            return true;
    return false;
}

void cli_usage(FILE *out)
{
    fputs("usage: loom [options] [\"first message\"]   the interactive agent (docs/repl.md)\n"
          "       loom -p [options] \"prompt\"      headless (prompt from stdin when omitted)\n"
          "       loom mcp list|get|add|add-json|remove   MCP servers (loom mcp --help)\n"
          "       loom doctor [--json] [options]   the configuration files, trust, sandbox\n"
          "       loom plugin list|install|enable|disable|remove|marketplace   plugins\n"
          "       loom sandbox [--allow-network] [--write PATH] -- CMD   run CMD in Loom's sandbox\n"
          "       loom signal SESSION [USR1|USR2|HUP|INT|TERM]   signal a running session\n"
          "       loom evolve review|audit|stats   self-evolution's proposals and metrics\n"
          "       loom --version\n"
          "\n"
          "  -p, --print                 answer one prompt and exit (headless)\n"
          "      --output-format FORMAT  text (default), json or stream-json (Claude Code's),\n"
          "                              or events (Loom's event stream)\n"
          "      --input-format FORMAT   text (default), or stream-json: user messages as\n"
          "                              JSON lines on stdin, each a run (with -p)\n"
          "  -r, --resume [ID]           continue session ID (or a unique prefix); no ID:\n"
          "                              choose from this directory's sessions\n"
          "  -c, --continue              continue the latest session in this directory\n"
          "      --fork-session          with --resume/--continue: continue in a copy\n"
          "      --provider NAME         anthropic, openai, openai-responses, replay\n"
          "      --model NAME            model name\n"
          "      --base-url URL          provider endpoint (e.g. a local server)\n"
          "      --cassette FILE         the replay provider's script\n"
          "      --system-prompt TEXT    system prompt for this run\n"
          "      --max-retries N         retries of a failed model call (default 3)\n"
          "      --max-turns N           stop after N model calls (default 500; exit 3)\n"
          "      --token-budget N        stop cleanly after N tokens (500k, 1.5m; or \"+500k\"\n"
          "                              in the prompt); a nudge comes at 80% (exit 3)\n"
          "      --context-window N      the model's context window in tokens\n"
          "      --reasoning-effort L    low, medium, high: OpenAI reasoning models only\n"
          "      --cwd DIR               work in DIR instead of the current directory\n"
          "      --permission-mode MODE  default, acceptEdits, plan, auto, dontAsk,\n"
          "                              bypassPermissions, fullAccess, delegate\n"
          "      --dangerously-skip-permissions  same as --permission-mode bypassPermissions\n"
          "      --fallback-model NAME   model to switch to when the main one keeps failing\n"
          "      --append-system-prompt TEXT  added to the built-in system prompt\n"
          "      --verbose               tool calls on stderr (text output)\n"
          "      --allowedTools RULES    allow rules, e.g. \"Bash(git log:*),Read\"\n"
          "      --disallowedTools RULES deny rules, same syntax (docs/permissions.md)\n"
          "      --add-dir DIR           another directory tools may read without asking\n"
          "      --no-stream             ask the provider for a whole reply at once\n"
          "      --thinking [BUDGET]     extended thinking (Anthropic), BUDGET tokens\n"
          "                              (default 31999, Claude Code's; at least 1024)\n"
          "      --mcp-config FILE|JSON  MCP servers from a file or a JSON text\n"
          "                              ({\"mcpServers\": {...}}); repeatable\n"
          "      --strict-mcp-config     only the --mcp-config servers\n"
          "      --agents on|off         the Agent tool: sub-agents (docs/agents.md)\n"
          "\n"
          "exit status: 0 done, 1 failed, 2 usage or configuration error, 3 stopped at a\n"
          "  limit (resumable), 130 interrupted\n"
          "environment: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, OPENAI_API_KEY,\n"
          "  OPENAI_BASE_URL, LOOM_PROVIDER, LOOM_MODEL, LOOM_HOME (default ~/.loom),\n"
          "  LOOM_LOG (JSONL log file)\n",
          out);
}

/* --output-format (text, json, stream-json, events) or --input-format
 * (text, stream-json). 0, or -1 having said why. */
static int parse_format(bool input, const char *v, cli_options *opt)
{
    if (input) {
        if (!strcmp(v, "text") || !strcmp(v, "stream-json")) {
            opt->input = !strcmp(v, "text") ? INPUT_TEXT : INPUT_STREAM_JSON;
            return 0;
        }
        fprintf(stderr, "loom: --input-format must be text or stream-json, not \"%s\"\n", v);
        return -1;
    }
    static const char *const names[] = {"text", "json", "stream-json", "events"};
    _Static_assert(OUTPUT_TEXT == 0 && OUTPUT_JSON == 1 && OUTPUT_STREAM_JSON == 2 &&
                       OUTPUT_EVENTS == 3,
                   "names[] follows output_format");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        if (!strcmp(v, names[i])) {
            opt->format = (output_format)i; /* names[] is in the enum's order */
            return 0;
        }
    }
    fprintf(stderr, "loom: --output-format must be text, json, stream-json or events, not \"%s\"\n",
            v);
    return -1;
}

int cli_parse(int argc, char **argv, cli_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->max_retries = -1;
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":pvhr::c", long_options, NULL)) != -1) {
        switch (c) {
        case 'p': opt->print = true; break;
        case 'v': opt->version = true; break;
        case 'h': opt->help = true; break;
        case 'r':
            /* "--resume ID" as well as "--resume=ID": a next word that could
             * be an id (no blank, no leading '-') is one; without it the
             * picker opens (session_picker.h). */
            if (!optarg && optind < argc && argv[optind][0] && argv[optind][0] != '-' &&
                !strpbrk(argv[optind], " \t\n"))
                optarg = argv[optind++];
            opt->resume = optarg;
            opt->resume_pick = !optarg;
            break;
        case 'c': opt->continue_latest = true; break;
        case OPT_OUTPUT_FORMAT:
        case OPT_INPUT_FORMAT:
            if (parse_format(c == OPT_INPUT_FORMAT, optarg, opt) != 0)
                return -1;
            break;
        case OPT_PROVIDER: opt->provider = optarg; break;
        case OPT_MODEL: opt->model = optarg; break;
        case OPT_BASE_URL: opt->base_url = optarg; break;
        case OPT_CASSETTE: opt->cassette = optarg; break;
        case OPT_SYSTEM_PROMPT: opt->system_prompt = optarg; break;
        case OPT_FORK_SESSION: opt->fork_session = true; break;
        case OPT_NO_STREAM: opt->no_stream = true; break;
        case OPT_MAX_RETRIES: {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 0 || n > 100) {
                fprintf(stderr, "loom: --max-retries takes a number from 0 to 100\n");
                return -1;
            }
            opt->max_retries = (int)n;
            break;
        }
        case OPT_MAX_TURNS: {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 1000000) {
                fprintf(stderr, "loom: --max-turns takes a number from 1 to 1000000\n");
                return -1;
            }
            opt->max_turns = (int)n;
            break;
        }
        case OPT_TOKEN_BUDGET: opt->token_budget = optarg; break;
        case OPT_CONTEXT_WINDOW: opt->context_window = optarg; break;
        case OPT_REASONING_EFFORT: opt->reasoning_effort = optarg; break;
        case OPT_CWD: opt->cwd = optarg; break;
        case OPT_PERMISSION_MODE:
            if (!valid_mode(optarg)) {
                fprintf(stderr, "loom: --permission-mode must be one of default, acceptEdits, "
                                "plan, auto, dontAsk, bypassPermissions, fullAccess, delegate\n");
                return -1;
            }
            opt->permission_mode = optarg;
            break;
        case OPT_SKIP_PERMISSIONS: opt->permission_mode = "bypassPermissions"; break;
        case OPT_FALLBACK_MODEL: opt->fallback_model = optarg; break;
        case OPT_APPEND_SYSTEM_PROMPT: opt->append_system_prompt = optarg; break;
        case OPT_VERBOSE: opt->verbose = true; break;
        case OPT_ALLOWED_TOOLS:
        case OPT_DISALLOWED_TOOLS: {
            bool allow = c == OPT_ALLOWED_TOOLS;
            int *n = allow ? &opt->n_allowed_tools : &opt->n_disallowed_tools;
            if (*n == 16) {
                fprintf(stderr, "loom: at most 16 %s flags; join rules with commas\n",
                        allow ? "--allowedTools" : "--disallowedTools");
                return -1;
            }
            (allow ? opt->allowed_tools : opt->disallowed_tools)[(*n)++] = optarg;
            break;
        }
        case OPT_THINKING:
            /* "--thinking 8000" as well as "--thinking=8000": a next word of
             * digits only is the budget, anything else the prompt. */
            if (!optarg && optind < argc && argv[optind][0] &&
                strspn(argv[optind], "0123456789") == strlen(argv[optind]))
                optarg = argv[optind++];
            opt->thinking = optarg ? optarg : "true";
            break;
        case OPT_ADD_DIR:
            if (opt->n_add_dirs == 16) {
                fprintf(stderr, "loom: at most 16 --add-dir flags\n");
                return -1;
            }
            opt->add_dirs[opt->n_add_dirs++] = optarg;
            break;
        case OPT_MCP_CONFIG:
            if (opt->n_mcp_configs == 16) {
                fprintf(stderr, "loom: at most 16 --mcp-config flags\n");
                return -1;
            }
            opt->mcp_configs[opt->n_mcp_configs++] = optarg;
            break;
        case OPT_STRICT_MCP_CONFIG: opt->strict_mcp_config = true; break;
        case OPT_AGENTS:
            /* on|off as the flag reads; the option itself is a bool. */
            if (!strcmp(optarg, "on") || !strcmp(optarg, "true"))
                opt->agents = "true";
            else if (!strcmp(optarg, "off") || !strcmp(optarg, "false"))
                opt->agents = "false";
            else {
                fprintf(stderr, "loom: --agents takes on or off, not \"%s\"\n", optarg);
                return -1;
            }
            break;
        case ':':
            fprintf(stderr, "loom: %s needs a value\n", argv[optind - 1]);
            return -1;
        default:
            fprintf(stderr, "loom: unknown option %s (see loom --help)\n", argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc)
        opt->prompt = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "loom: one prompt only; quote it (\"%s …\")\n", opt->prompt);
        return -1;
    }
    if ((opt->resume || opt->resume_pick) && opt->continue_latest) {
        fprintf(stderr, "loom: --resume and --continue cannot be used together\n");
        return -1;
    }
    if (opt->input == INPUT_STREAM_JSON && (!opt->print || opt->prompt)) {
        fprintf(stderr, "loom: --input-format stream-json needs -p and takes no prompt "
                        "argument: the messages come on stdin\n");
        return -1;
    }
    if (opt->fork_session && !opt->resume && !opt->resume_pick && !opt->continue_latest) {
        fprintf(stderr, "loom: --fork-session needs --resume ID or --continue\n");
        return -1;
    }
    return 0;
}
