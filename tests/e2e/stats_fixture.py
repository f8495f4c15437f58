#!/usr/bin/env python3
"""Writes 100 session files for `loom stats` (tests/e2e/stats_sessions.sh)
in the record format of docs/session-format.md, and the JSON `loom stats
--json` must print for them, computed here from what was written (the
generation's own counts and the price rows read from provider/models.c),
never by reading the files back.

Usage: stats_fixture.py LOOM_HOME MODELS_C BY SINCE|- OUT_EXPECTED
The sessions are the same on every call (no randomness), so one call per
--by writes the same files again."""
import json, os, re, sys

home, models_c, by, since, out = sys.argv[1:6]
since = None if since == "-" else since

# The table's single-tier rows: id -> (input, output, cache_write, cache_read).
PRICE = re.compile(r'\{"([^"]+)", PRICE\(([^)]*)\)(?:, "[0-9-]+")?\}')
prices = {m.group(1): tuple(float(x) for x in m.group(2).split(","))
          for m in PRICE.finditer(open(models_c).read())}
MODELS = ["claude-sonnet-5-5", "gpt-4.1", "local-unpriced-7b"]
assert MODELS[0] in prices and MODELS[1] in prices and MODELS[2] not in prices
PROJECTS = ["/work/alpha", "/work/beta", "/work/gamma"]
DAYS = ["2026-11-28", "2026-11-29", "2026-11-30", "2026-12-01"]


def slug(cwd):
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


def rec(kind, day, n, **fields):
    r = {"type": kind, "id": f"r{n}", "parentId": None,
         "timestamp": f"{day}T10:00:{n % 60:02d}.000Z", "sessionId": "s"}
    r.update(fields)
    return r


rows, total = {}, None


def new_row(key):
    return {"key": key, "tokens": dict(input=0, output=0, cache_read=0, cache_write=0,
                                       reasoning=0, total=0),
            "cost": 0.0, "model_calls": 0, "unpriced_calls": 0, "runs": set(),
            "tool_calls": 0, "tool_failures": 0}


def count(key, session, usage=None, model=None, tool_call=False, failure=False):
    global total
    total = total or new_row(None)
    for r in (total, rows.setdefault(key, new_row(key))):
        r["runs"].add(session)
        r["tool_calls"] += tool_call
        r["tool_failures"] += failure
        if usage:
            i, o, cr, cw = usage
            t = r["tokens"]
            t["input"] += i; t["output"] += o; t["cache_read"] += cr; t["cache_write"] += cw
            t["total"] += i + o + cr + cw
            r["model_calls"] += 1
            if model in prices:
                pi, po, pcw, pcr = prices[model]
                r["cost"] += (i * pi + o * po + cw * pcw + cr * pcr) / 1e6
            else:
                r["unpriced_calls"] += 1


def write(path, records):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in records:
            f.write((r if isinstance(r, str) else json.dumps(r)) + "\n")


for s in range(100):
    day, model, cwd = DAYS[s % 4], MODELS[s % 3], PROJECTS[(s // 3) % 3]
    sub = s % 10 == 0          # every tenth session also ran an Explore sub-agent
    path = f"{home}/projects/{slug(cwd)}/session-{s:03d}.jsonl"
    recs = [rec("session-meta", day, 0, cwd=cwd, version="test", provider="x", model=model,
                createdAt=f"{day}T09:00:00.000Z")]
    sid = f"main-{s}"

    def key(agent):
        return {"day": day, "model": model, "project": cwd, "agent": agent}[by]

    counted = since is None or day >= since
    recs.append(rec("message", day, 1, role="user", content=[{"type": "text", "text": "go"}]))
    if counted:
        count(key("main"), sid)
    tools = s % 5 + 1
    for t in range(tools):
        usage = (1000 + s, 200 + t, 5000 * t, 300 if t == 0 else 0)
        n = 10 + 3 * t
        recs.append(rec("function_call", day, n, callId=f"c{t}", name="Bash", arguments="{}",
                        providerData={"model": model, "usage": {
                            "inputTokens": usage[0], "outputTokens": usage[1],
                            "cacheReadTokens": usage[2], "cacheCreationTokens": usage[3],
                            "reasoningTokens": 0, "totalTokens": sum(usage)}}))
        failed = (s + t) % 7 == 0
        recs.append(rec("function_call_result", day, n + 1, callId=f"c{t}",
                        status="error" if failed else "completed", output="x", isError=failed))
        if counted:
            count(key("main"), sid, usage, model, tool_call=True)
            count(key("main"), sid, failure=failed)
    if s % 25 == 7:            # a torn line and one that is not a record
        recs.append('{"type": "message", "role": "assi')
        recs.append("[1, 2, 3]")
    write(path, recs)
    if sub:
        subid = f"sub-{s}"
        srecs = [rec("session-meta", day, 0, cwd=cwd, version="test", provider="x",
                     model=MODELS[0], isSidechain=True, agentType="Explore",
                     createdAt=f"{day}T09:30:00.000Z"),
                 rec("message", day, 1, role="assistant", content=[{"type": "text", "text": "ok"}],
                     providerData={"model": MODELS[0], "usage": {
                         "inputTokens": 40, "outputTokens": 7, "cacheReadTokens": 0,
                         "cacheCreationTokens": 0}})]
        write(f"{path}.mf/subagents/{subid}.jsonl", srecs)
        if counted:
            k = {"day": day, "model": MODELS[0], "project": cwd, "agent": "Explore"}[by]
            count(k, subid, (40, 7, 0, 0), MODELS[0])


def finish(r):
    o = {}
    if r["key"] is not None:
        o["key"] = r["key"]
    o["tokens"] = r["tokens"]
    o["cost_usd"] = round(r["cost"], 9) if r["model_calls"] > r["unpriced_calls"] else None
    for k in ("model_calls", "unpriced_calls"):
        o[k] = r[k]
    o["runs"] = len(r["runs"])
    o["tool_calls"], o["tool_failures"] = r["tool_calls"], r["tool_failures"]
    o["tool_failure_rate"] = (round(r["tool_failures"] / r["tool_calls"], 9)
                              if r["tool_calls"] else None)
    return o


expected = {"by": by}
if since:
    expected["since"] = since
bad_files = len([s for s in range(100) if s % 25 == 7])
expected.update(sessions=100 + 10, unreadable={"records": 2 * bad_files, "files": bad_files},
                total=finish(total), rows=[finish(rows[k]) for k in sorted(rows)])
json.dump(expected, open(out, "w"), indent=1, sort_keys=True)
