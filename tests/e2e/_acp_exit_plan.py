#!/usr/bin/env python3
"""_acp_exit_plan.py LOOM_ACP CWD — drives `loom acp` over raw JSON-RPC for
tests/e2e/acp_exit_plan.sh: a session set to acceptEdits, then plan; a
prompt whose model calls ExitPlanMode gets a session/request_permission
(kind switch_mode, the plan and the mode approval restores in its
content), answered reject_once: the mode stays plan; a second prompt's
request answered allow_once: a current_mode_update to acceptEdits follows.
Prints TAP-style lines; exits 1 on a failure."""
import json
import subprocess
import sys
import threading

acp, cwd = sys.argv[1], sys.argv[2]
child = subprocess.Popen([acp], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
lock = threading.Condition()
responses, updates, asked = {}, [], []
answer_with = ["reject_once"]
failed = 0


def check(what, cond, detail=None):
    global failed
    if cond:
        print("ok - " + what)
    else:
        failed += 1
        print("not ok - %s%s" % (what, (": " + json.dumps(detail)[:1500]) if detail is not None else ""))


def send(m):
    m["jsonrpc"] = "2.0"
    child.stdin.write(json.dumps(m) + "\n")
    child.stdin.flush()


def reader():
    for line in child.stdout:
        m = json.loads(line)
        with lock:
            if "method" in m and "id" in m:
                asked.append(m)
                if m["method"] == "session/request_permission":
                    send({"id": m["id"], "result": {"outcome": {"outcome": "selected",
                                                                "optionId": answer_with[0]}}})
                else:
                    send({"id": m["id"], "result": {}})
            elif m.get("method") == "session/update":
                updates.append(m["params"])
            elif "id" in m:
                responses[m["id"]] = m
            lock.notify_all()


threading.Thread(target=reader, daemon=True).start()
next_id = [0]


def request(method, params):
    next_id[0] += 1
    rid = next_id[0]
    send({"id": rid, "method": method, "params": params})
    with lock:
        if not lock.wait_for(lambda: rid in responses, timeout=60):
            return {"error": "no answer to " + method}
        return responses.pop(rid)


def mode_updates(sid):
    with lock:
        return [u["update"].get("currentModeId") for u in updates
                if u.get("sessionId") == sid and u["update"].get("sessionUpdate") == "current_mode_update"]


request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
sid = request("session/new", {"cwd": cwd, "mcpServers": []})["result"]["sessionId"]
request("session/set_mode", {"sessionId": sid, "modeId": "acceptEdits"})
request("session/set_mode", {"sessionId": sid, "modeId": "plan"})
check("the session is in plan mode", mode_updates(sid)[-1:] == ["plan"], mode_updates(sid))

r = request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "PLAN-ONE"}]})
check("the first prompt ends", r.get("result", {}).get("stopReason") == "end_turn", r)
perms = [m["params"] for m in asked if m["method"] == "session/request_permission"]
check("ExitPlanMode asked the client for permission", len(perms) == 1, perms)
if perms:
    tc = perms[0]["toolCall"]
    text = json.dumps(tc.get("content", [])) + json.dumps(tc.get("rawInput", {}))
    check("  as a switch_mode call", tc.get("kind") == "switch_mode", tc)
    check("  with the plan", "Write notes.txt with the summary" in text, tc)
    check("  and the mode approval restores", "approving leaves plan mode for acceptEdits" in text, tc)
check("rejected: no mode change was announced", mode_updates(sid)[-1:] == ["plan"], mode_updates(sid))

answer_with[0] = "allow_once"
r = request("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": "PLAN-TWO"}]})
check("the second prompt ends", r.get("result", {}).get("stopReason") == "end_turn", r)
check("approved: a current_mode_update to acceptEdits follows", mode_updates(sid)[-1:] == ["acceptEdits"],
      mode_updates(sid))
child.stdin.close()
child.wait(timeout=30)
sys.exit(1 if failed else 0)
