# recorded_streams_check.py — checks one replay of a corpus entry
# (tests/corpus/MANIFEST.json) for provider_recorded_streams.sh: what Loom
# printed (the events format's token.delta), the tool calls it ran (tool.started),
# the stop reason and usage of the recorded turn (model.completed, and the
# session file's providerData.usage), how many requests it made, and what it
# sent back on the next turn (the request log of sse_replay.py).
#
# An entry with "known_failure" must still fail one of its checks — the mark
# names a Loom bug the lead owns; when the bug is fixed this reports "known
# failure now passes" so the mark is removed in the same change.
#
# usage: python3 recorded_streams_check.py ENTRY_JSON EVENTS REQUEST_LOG SESSION_DIR
# prints "ok - …" / "not ok - …" lines; exit 0 always (the .sh counts).
import glob
import json
import sys

entry = json.loads(sys.argv[1])
events = [json.loads(l) for l in open(sys.argv[2]) if l.strip().startswith("{")]
requests = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
session_dir = sys.argv[4]
name, exp = entry["name"], entry["expect"]
results = []


def check(what, got, want):
    results.append((what, got == want, got, want))


def first_turn():
    text, reasoning, tools, completed, warnings = "", "", [], None, []
    for e in events:
        t, p = e.get("type"), e.get("payload", {})
        if t == "warning.emitted":
            warnings.append(p)
        if completed is None:
            if t == "token.delta" and p.get("channel") == "text":
                text += p.get("text", "")
            elif t == "token.delta" and p.get("channel") == "reasoning":
                reasoning += p.get("text", "")
            elif t == "model.completed":
                completed = p
        if t == "tool.started" and len(tools) < len(exp.get("tool_calls") or []) + 1:
            tools.append({"name": p.get("tool"), "arguments": p.get("input")})
    return text, reasoning, tools, completed, warnings


def final_state():
    for e in reversed(events):
        if e.get("type") == "run.state_changed":
            return e.get("payload", {})
    return {}


def error_codes(warnings):
    codes = [w.get("code") for w in warnings if w.get("code")]
    fin = final_state()
    if fin.get("state") not in (None, "completed"):
        err = fin.get("error") or {}
        codes.append(err.get("code") if isinstance(err, dict) else fin.get("error_code"))
    return codes


text, reasoning, tools, completed, warnings = first_turn()
if "error" in exp:
    # An error reply: Loom must name it with the expected code (a retry
    # warning or the run's failure), and never print recorded text as if the
    # reply had succeeded.
    codes = error_codes(warnings)
    check("error code", exp.get("loom_error_code") in codes, True)
    results[-1] = ("error code %s among %s" % (exp.get("loom_error_code"), codes),) + results[-1][1:]
else:
    check("printed text", text, exp["text"])
    if exp.get("reasoning"):
        check("reasoning shown on channel reasoning", reasoning, exp["reasoning"])
    check("tool calls (name, arguments)", tools[: len(exp["tool_calls"])] if exp["tool_calls"] else tools, exp["tool_calls"])
    check("stop reason", (completed or {}).get("stop_reason"), exp["stop_reason"])
    u = (completed or {}).get("usage") or {}
    check("usage", {k: u.get(k) for k in exp["usage"]}, exp["usage"])
    # The session file records the same usage for the recorded turn.
    recorded = []
    for f in glob.glob(session_dir + "/**/*.jsonl", recursive=True):
        for l in open(f):
            r = json.loads(l)
            pu = (r.get("providerData") or {}).get("usage")
            if pu and (r.get("providerData") or {}).get("conversationRequestId"):
                recorded.append({k: pu.get(k) for k in exp["usage"]})
    check("usage in the session file", recorded[:1], [exp["usage"]])
    # One request per turn: a reply accepted the first time is never re-requested.
    want_requests = exp.get("requests", 2 if exp["tool_calls"] else 1)
    check("requests made", len(requests), want_requests)
    retried = [w for w in warnings if w.get("kind") == "model_retry"]
    if exp.get("retries"):
        # A recorded retry sequence (429, 429, then the reply): retried as often, named by its code.
        check("retries", [w.get("code") for w in retried], [exp["retry_code"]] * exp["retries"])
    else:
        check("no retry", [w.get("message") for w in retried], [])
    check("run ends", final_state().get("state"), "completed")
    if "final_text" in exp:
        # A recorded conversation: the last recorded reply is what the run ends with.
        check("final result", final_state().get("result"), exp["final_text"])
    # What goes back on the next turn: the tool calls (and any signature or
    # redacted block that must be echoed) appear in the second request.
    if exp["tool_calls"] and len(requests) > 1:
        body = requests[1]["body"]
        for tc in exp["tool_calls"]:
            check("next request carries tool call %s" % tc["name"], '"%s"' % tc["name"] in body, True)
        for echo in exp.get("echo_next", []):
            check("next request echoes %s" % echo[:24], echo in body, True)

failed = [r for r in results if not r[1]]
if entry.get("known_failure"):
    if failed:
        print("ok - %s: known failure still fails (%s): %s" % (name, entry["known_failure"], "; ".join(r[0] for r in failed)))
    else:
        print("not ok - %s: known failure now passes — remove its known_failure mark" % name)
else:
    for what, good, got, want in results:
        if good:
            print("ok - %s: %s" % (name, what))
        else:
            print("not ok - %s: %s: got %s, expected %s" % (name, what, json.dumps(got, ensure_ascii=False)[:400],
                                                          json.dumps(want, ensure_ascii=False)[:400]))
