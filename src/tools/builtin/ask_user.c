/* ask_user.c — AskUserQuestion: the model asks the user one to four
 * multiple-choice questions and waits for the answers (Claude Code's shape,
 * so models trained on it call it right).
 *
 * The asking itself belongs to the surface, through ctx->ask_user. Its
 * answer is expected as a JSON object mapping each question's text to the
 * chosen label (a string; for multiSelect, several labels joined by ", " or
 * an array of them; the user may also type free text instead of a label).
 * Anything that is not such an object is passed on verbatim as the user's
 * reply. NULL means the user dismissed the questions.
 *
 * With no user to ask (headless runs), the call fails with a result that
 * tells the model to go on with its own judgement: blocking a script on a
 * question nobody will see is worse than a stated assumption.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "tools/builtin/builtin.h"
#include "tools/builtin/html_text.h"
#include "tools/tool.h"

/* Both options and questions are compared by exact text: the answers come
 * back keyed by question text, and two equal labels could not be told
 * apart by the user either. */
static int ask_validate(const json_t *input, const tool_ctx *ctx, loom_str *why)
{
    const json_t *qs = json_object_get(input, "questions");
    size_t i, j;
    json_t *q;
    json_array_foreach(qs, i, q) {
        const char *text = json_string_value(json_object_get(q, "question"));
        for (j = 0; j < i && text; j++) {
            const char *other =
                json_string_value(json_object_get(json_array_get(qs, j), "question"));
            if (other && strcmp(text, other) == 0) {
                str_printf(why,
                           "\"questions[%zu].question\" repeats questions[%zu]; each question "
                           "must be different",
                           i, j);
                return -1;
            }
        }
        const json_t *opts = json_object_get(q, "options");
        size_t a;
        json_t *opt;
        json_array_foreach(opts, a, opt) {
            const char *label = json_string_value(json_object_get(opt, "label"));
            for (size_t b = 0; b < a && label; b++) {
                const char *other =
                    json_string_value(json_object_get(json_array_get(opts, b), "label"));
                if (other && strcmp(label, other) == 0) {
                    str_printf(why,
                               "\"questions[%zu].options[%zu].label\" repeats options[%zu]; each "
                               "option of a question needs its own label",
                               i, a, b);
                    return -1;
                }
            }
        }
    }
    return 0;
}

static void put_answer_value(loom_str *out, const json_t *v)
{
    if (json_is_string(v)) {
        str_puts(out, json_string_value(v));
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            if (i)
                str_puts(out, ", ");
            put_answer_value(out, e);
        }
    } else {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        str_puts(out, s ? s : "");
        free(s);
    }
}

static int ask_run(const json_t *input, tool_ctx *ctx, tool_result *out)
{
    const json_t *qs = json_object_get(input, "questions");
    if (!ctx->ask_user) {
        tool_error(out, "No user is available to answer questions in this mode (headless). "
                        "Proceed with your best judgement and state your assumptions.");
        out->raw = json_pack("{s:b}", "noUserAvailable", 1);
        return 0;
    }
    char *reply = ctx->ask_user(ctx->ask_ctx, qs);
    if (!reply) {
        tool_error(out, "The user dismissed the questions without answering. Do not assume an "
                        "answer: continue only with what does not depend on it, or ask again "
                        "in plain text.");
        out->raw = json_pack("{s:b}", "declined", 1);
        return 0;
    }
    /* Typed at a terminal, the reply may be in any encoding; the result
     * must be UTF-8 to reach the model at all. */
    char *answer = text_to_utf8(reply, strlen(reply), 0, NULL);
    free(reply);
    json_t *parsed = json_loads(answer, 0, NULL);
    if (json_is_object(parsed) && json_object_size(parsed) > 0) {
        str_puts(&out->text, "User has answered your questions:");
        /* In the order the questions were asked, then anything extra. */
        size_t i;
        json_t *q;
        json_array_foreach(qs, i, q) {
            const char *text = json_string_value(json_object_get(q, "question"));
            const json_t *a = text ? json_object_get(parsed, text) : NULL;
            str_printf(&out->text, "\n\"%s\" = \"", text ? text : "");
            if (a)
                put_answer_value(&out->text, a);
            else
                str_puts(&out->text, "(no answer)");
            str_putc(&out->text, '"');
        }
        const char *k;
        json_t *a;
        json_object_foreach(parsed, k, a) {
            bool asked = false;
            json_array_foreach(qs, i, q) {
                const char *text = json_string_value(json_object_get(q, "question"));
                if (text && strcmp(text, k) == 0)
                    asked = true;
            }
            if (!asked) {
                str_printf(&out->text, "\n\"%s\" = \"", k);
                put_answer_value(&out->text, a);
                str_putc(&out->text, '"');
            }
        }
        str_puts(&out->text, "\nYou can now continue with the user's answers in mind.");
        out->raw = json_pack("{s:O, s:O}", "questions", qs, "answers", parsed);
    } else {
        str_printf(&out->text, "The user replied: %s\nYou can now continue with the user's "
                               "reply in mind.", answer);
        out->raw = json_pack("{s:O, s:s}", "questions", qs, "answers", answer);
    }
    json_decref(parsed);
    free(answer);
    return 0;
}

const tool_def tool_ask_user = {
    .name = "AskUserQuestion",
    .description =
        "Asks the user one to four multiple-choice questions and waits for the answers.\n\n"
        "Use it when you need the user's preference or decision to go on: an ambiguous "
        "requirement, a choice between approaches, a detail only they know. Do not use it for "
        "things you can find out yourself, or to ask permission for a step (the permission "
        "system does that).\n\n"
        "- Each question has a short header (a chip label, about 12 characters), the question "
        "text, and 2-4 options with a label (1-5 words) and a description of what choosing it "
        "means.\n"
        "- The user can always answer in their own words instead of picking an option; do not "
        "add an \"Other\" option.\n"
        "- Set multiSelect to true when several options can apply together.\n"
        "- If you recommend an option, put it first and end its label with \"(Recommended)\".\n"
        "- In headless runs no user can answer: the call fails, and you should proceed with "
        "your best judgement and state your assumptions.",
    .input_schema =
        "{\"type\":\"object\",\"properties\":{\"questions\":{\"type\":\"array\","
        "\"description\":\"The questions to ask (1-4)\",\"minItems\":1,\"maxItems\":4,"
        "\"items\":{\"type\":\"object\",\"properties\":{"
        "\"question\":{\"type\":\"string\",\"minLength\":1,"
        "\"description\":\"The full question, ending with a question mark\"},"
        "\"header\":{\"type\":\"string\",\"minLength\":1,"
        "\"description\":\"A very short label shown as a chip (about 12 characters)\"},"
        "\"options\":{\"type\":\"array\",\"minItems\":2,\"maxItems\":4,"
        "\"description\":\"The choices (2-4); the user may also answer in their own words\","
        "\"items\":{\"type\":\"object\",\"properties\":{"
        "\"label\":{\"type\":\"string\",\"minLength\":1,"
        "\"description\":\"The choice as shown (1-5 words)\"},"
        "\"description\":{\"type\":\"string\","
        "\"description\":\"What this choice means or implies\"}},"
        "\"required\":[\"label\",\"description\"],\"additionalProperties\":false}},"
        "\"multiSelect\":{\"type\":\"boolean\","
        "\"description\":\"Whether several options may be chosen together\"}},"
        "\"required\":[\"question\",\"header\",\"options\"],\"additionalProperties\":false}}},"
        "\"required\":[\"questions\"],\"additionalProperties\":false}",
    .read_only = true,         /* it changes nothing outside the conversation */
    .concurrency_safe = false, /* one prompt at a time: the user answers one dialog */
    .validate = ask_validate,
    .run = ask_run,
};
