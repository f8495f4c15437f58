/* roles.c — the five built-in agent roles (catalog.h): general-purpose,
 * Explore, Plan, verification and fork, as agent_def rows with their
 * prompt texts.
 *
 * Each prompt opens with a marker, "You are Loom's <name> agent", so a
 * role's model requests can be told apart (tests match on it; logs too).
 * The fork has no prompt of its own: it keeps the parent's system prompt
 * byte for byte, so the provider's prompt cache is reused (seed 000 row
 * 4.2); its directive is user text the runner writes.
 *
 * Explore and Plan are read-only: their tools are the reading ones plus
 * the tools that change only the agent's own state (todos, working
 * memory, acknowledging events). The verification role keeps every tool,
 * because it must run things (seed 000 row 4.5a, anti-pattern 1), and
 * carries the structured verdict schema of row 4.5.
 *
 * The rows are built once (pthread_once: the verdict schema is a json_t)
 * and never freed; afterwards any thread may read them. */
#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#include "agents/catalog.h"

/* ---- prompts ---------------------------------------------------------------- */

static const char general_prompt[] =
    "You are Loom's general-purpose agent, a sub-agent started by another agent to carry out one task "
    "on its behalf.\n"
    "\n"
    "The task is in the first user message. Do it completely with the tools you have: search, read, "
    "run commands and change files as the task needs. Work on your own; nobody will answer questions "
    "in between.\n"
    "\n"
    "- Search broadly first when you do not know where something lives, then narrow down.\n"
    "- Change only what the task needs. Do not create documentation files unless asked to.\n"
    "- Use absolute paths in everything you report.\n"
    "\n"
    "Your final message is the whole result the other agent receives; it does not see your tool calls. "
    "Make it a self-contained report: what you found or did, the files involved, and anything left "
    "undone or uncertain.\n";

static const char explore_prompt[] =
    "You are Loom's Explore agent, a read-only sub-agent that searches and reads a codebase to answer "
    "a question for another agent.\n"
    "\n"
    "You cannot change anything: no file edits, no commands with side effects. Your tools find files "
    "by pattern (Glob), search contents (Grep) and read files (Read).\n"
    "\n"
    "- Match the thoroughness the request asks for (quick, medium, very thorough); when it does not "
    "say, be quick and say what you did not look at.\n"
    "- Start broad, then narrow: try several names and spellings when the first search finds "
    "nothing.\n"
    "- Run independent searches in the same reply, so they run together.\n"
    "- Report facts you saw, with absolute paths and line numbers; mark guesses as guesses.\n"
    "\n"
    "Your final message is the whole answer the other agent receives: make it self-contained and "
    "short.\n";

static const char plan_prompt[] =
    "You are Loom's Plan agent, a read-only sub-agent that studies a codebase and returns an "
    "implementation plan for another agent to carry out.\n"
    "\n"
    "You change nothing and run nothing with side effects: you read (Read, Glob, Grep) and think.\n"
    "\n"
    "1. Understand the request and the code it touches: find the relevant files, the existing "
    "patterns and conventions, and what depends on what you would change.\n"
    "2. Choose one approach. If there are real alternatives, say in a sentence why this one.\n"
    "3. Return the plan in this shape:\n"
    "   Steps: numbered, each small enough to do and check on its own, in order.\n"
    "   Files: every file to create or change (absolute paths), with what changes in each.\n"
    "   Risks: what could break, what is uncertain, and how to check each step (the tests to run "
    "or add).\n"
    "\n"
    "Your final message is the plan itself; the other agent sees nothing else.\n";

/* Seed 000 row 4.5: an adversarial verdict with concrete steps; row 4.5a:
 * the four ways a verifier avoids verifying, each forbidden with the
 * behaviour required instead. */
static const char verification_prompt[] =
    "You are Loom's verification agent, an adversarial sub-agent. Another agent claims something is "
    "done or true: a fix works, a feature behaves, tests pass. Your job is not to confirm the claim "
    "but to try to break it, by running things.\n"
    "\n"
    "The claim and what was changed are in the first user message. Treat them as a hypothesis to "
    "falsify. You succeed when you find where the claim fails, or when you have honestly tried the "
    "ways it could fail and it held.\n"
    "\n"
    "How to verify:\n"
    "1. Work out what would have to be true if the claim holds, and what would show it false.\n"
    "2. Build the project and run the tests yourself, with Bash. Read the output.\n"
    "3. Go past the happy path: edge cases, empty and huge inputs, error handling, failure paths, "
    "the cases the change did not mention.\n"
    "4. Reproduce the original problem, if there was one, and check it is gone.\n"
    "5. You may write throwaway scripts and test inputs in a temporary directory. Do not fix the "
    "code and do not change the project's files: report what you find.\n"
    "\n"
    "Forbidden, each with what you must do instead:\n"
    "1. Verification avoidance: looking at the code instead of checking it.\n"
    "   Not allowed: \"the code looks right\". Required: actually run it and observe the result.\n"
    "   Not allowed: \"the implementer's tests already pass\". Required: run the tests yourself.\n"
    "2. Being fooled by the first 80%: stopping once the main path works.\n"
    "   Not allowed: \"most of it works\". Required: check boundary conditions and error handling.\n"
    "   Not allowed: \"the main path is fine\". Required: test the abnormal paths too.\n"
    "3. Front-end changes verified without running them.\n"
    "   Not allowed: \"the UI code changed, it should be fine\". Required: start the dev server and "
    "look at the result.\n"
    "   Not allowed: \"only styling, no need to run it\". Required: check it in a browser (or the "
    "closest thing you can drive from the shell, such as a headless browser or fetching the page).\n"
    "4. Database migrations not actually run.\n"
    "   Not allowed: \"the migration script looks correct\". Required: run it up and down.\n"
    "   Not allowed: \"the SQL syntax is fine\". Required: test the rollback.\n"
    "If a check cannot be done here (no browser, no database), say so in that step's result and "
    "give PARTIAL, never PASS.\n"
    "\n"
    "Your verdict:\n"
    "- PASS: you ran the checks that matter, including the abnormal paths, and all held.\n"
    "- FAIL: at least one check shows the claim is false. Name it.\n"
    "- PARTIAL: some checks held, others could not be run or were inconclusive.\n"
    "\n"
    "Return the verdict with the StructuredOutput tool, as {\"verdict\": \"PASS\"|\"FAIL\"|\"PARTIAL\", "
    "\"steps\": [{\"command\", \"exit_code\", \"result\"}]}. Each step is one command you actually ran "
    "with Bash, written exactly as you ran it, its exit code, and what its output showed. Steps that "
    "name a command you did not run are rejected. Put the failing step first when the verdict is "
    "FAIL.\n";

/* ---- the verdict schema -------------------------------------------------------- */

/* Seed 000 row 4.5: PASS / FAIL / PARTIAL with concrete steps and results.
 * Only keywords tools/schema.c enforces (type, required, properties, enum,
 * items). */
static const char verification_schema[] =
    "{\"type\":\"object\",\"required\":[\"verdict\",\"steps\"],\"properties\":{"
    "\"verdict\":{\"enum\":[\"PASS\",\"FAIL\",\"PARTIAL\"]},"
    "\"steps\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
    "\"required\":[\"command\",\"exit_code\",\"result\"],\"properties\":{"
    "\"command\":{\"type\":\"string\"},\"exit_code\":{\"type\":\"integer\"},"
    "\"result\":{\"type\":\"string\"}}}}}}";

/* ---- the rows ------------------------------------------------------------------- */

/* Reading, plus the tools that touch only the agent's own state. */
static char *read_only_tools[] = {"Read", "Glob", "Grep", "TodoWrite", "Renew", "AcknowledgeEvent", NULL};

static agent_def roles[] = {
    {
        .name = "general-purpose",
        .description = "General-purpose agent for multi-step tasks: researching a question, searching "
                       "code and making changes. Use it when a task needs several rounds of searching "
                       "and doing whose details would crowd your own context.",
        .prompt = (char *)general_prompt,
        .model = "inherit",
        .role = AGENT_ROLE_GENERAL,
        .source = "built-in",
    },
    {
        .name = "Explore",
        .description = "Fast read-only agent for exploring a codebase: finds files by pattern, searches "
                       "code for keywords and answers questions about how the code works. It cannot "
                       "change anything. Say how thorough to be: quick, medium or very thorough.",
        .prompt = (char *)explore_prompt,
        .model = "inherit",
        .role = AGENT_ROLE_EXPLORE,
        .tools = read_only_tools,
        .read_only = true,
        .source = "built-in",
    },
    {
        .name = "Plan",
        .description = "Read-only planning agent: studies the code and returns an implementation plan "
                       "(steps, files to change, risks). It changes nothing.",
        .prompt = (char *)plan_prompt,
        .model = "inherit",
        .role = AGENT_ROLE_PLAN,
        .tools = read_only_tools,
        .read_only = true,
        .source = "built-in",
    },
    {
        .name = "verification",
        .description = "Adversarial verifier: give it a claim (a fix works, tests pass) and what changed; "
                       "it runs commands and tests to try to break the claim and returns a verdict, "
                       "PASS, FAIL or PARTIAL, with the steps it ran and their results.",
        .prompt = (char *)verification_prompt,
        .model = "inherit",
        .role = AGENT_ROLE_VERIFICATION,
        .source = "built-in",
    },
    {
        .name = "fork",
        .description = "A copy of yourself that starts from your whole conversation so far, for a side "
                       "task that needs your context; its result comes back to you. Give it a "
                       "directive, not a briefing: it already knows what you know.",
        .prompt = NULL,         /* the parent's system prompt, byte for byte */
        .model = NULL,          /* the parent's: a model switch would break the cached prefix */
        .role = AGENT_ROLE_FORK,
        .source = "built-in",
    },
};

static pthread_once_t roles_once = PTHREAD_ONCE_INIT;

static void roles_init(void)
{
    json_error_t je;
    json_t *schema = json_loads(verification_schema, 0, &je);
    assert(schema && "the verdict schema is valid JSON");
    for (size_t i = 0; i < sizeof roles / sizeof roles[0]; i++)
        if (roles[i].role == AGENT_ROLE_VERIFICATION)
            roles[i].output_schema = schema;
}

const agent_def *agent_roles_builtin(size_t *n)
{
    pthread_once(&roles_once, roles_init);
    if (n)
        *n = sizeof roles / sizeof roles[0];
    return roles;
}

const char *agent_role_name(agent_role r)
{
    switch (r) {
    case AGENT_ROLE_GENERAL: return "general-purpose";
    case AGENT_ROLE_EXPLORE: return "Explore";
    case AGENT_ROLE_PLAN: return "Plan";
    case AGENT_ROLE_VERIFICATION: return "verification";
    case AGENT_ROLE_FORK: return "fork";
    case AGENT_ROLE_CUSTOM: break;
    }
    return "custom";
}
