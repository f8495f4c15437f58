# bench/peers_table.jq — the table bench/peers.sh prints, from its results
# (one JSON object per run: agent, kind, ok, why, turns, cpu_ms, wall_ms,
# max_rss_kb, request_bytes, requests). Args: $runs, $cv, $clv (versions).

def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
            else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def f(n): if . == null then "-" else (. * pow(10; n) | round) / pow(10; n) | tostring end;
def pad(w): tostring | if length >= w then . else . + (" " * (w - length)) end;
def lpad(w): tostring | if length >= w then . else (" " * (w - length)) + . end;
group_by(.agent + "/" + .kind) | map({key: (.[0].agent + "/" + .[0].kind), value: {
    agent: .[0].agent, kind: .[0].kind, ok: all(.ok), why: (map(.why) | unique | map(select(. != "")) | join("; ")),
    turns: (map(.turns) | max), cpu: (map(.cpu_ms) | median), wall: (map(.wall_ms) | median),
    rss: (map(.max_rss_kb) | median), bytes: (map(.request_bytes) | median),
    requests: (map(.requests) | median)}}) | from_entries as $r
| def per_turn(a; k): $r[a + "/" + k] as $x | $r[a + "/chat"] as $c
    | if ($x.ok and $c.ok) then ($x.cpu - $c.cpu) / ($x.turns - 1) else null end;
["agents: loom, codex-cli \($cv), claude-code \($clv); medians of \($runs) runs; whole process tree; mockllm on loopback in a network namespace", "",
 ([("task" | pad(6)), ("agent" | pad(7)), ("status" | pad(7)), ("turns" | lpad(5)), ("CPU ms" | lpad(9)),
   ("harness CPU/turn ms" | lpad(20)), ("wall ms" | lpad(9)), ("peak RSS MiB" | lpad(13)),
   ("requests" | lpad(9)), ("request KiB" | lpad(12))] | join(" "))]
+ [ ("chat", "fix", "long") as $k | ("loom", "codex", "claude") as $a | $r[$a + "/" + $k] |
    select(. != null) | . as $row |
    [(.kind | pad(6)), (.agent | pad(7)), ((if .ok then "ok" else "FAILED" end) | pad(7)),
     (.turns | lpad(5)), (.cpu | f(1) | lpad(9)),
     ((if $k == "chat" then "(baseline)" else per_turn($a; $k) | f(3) end) | lpad(20)),
     (.wall | f(1) | lpad(9)), (.rss / 1024 | f(1) | lpad(13)), (.requests | lpad(9)),
     (.bytes / 1024 | f(1) | lpad(12))] | join(" ")
    + (if $row.ok then "" else "   (" + $row.why + ")" end) ]
+ ["", "ratios (harness CPU per turn; whole-run CPU in brackets):"]
+ [ ("fix", "long") as $k | per_turn("loom"; $k) as $l |
    "  \($k | pad(5)) codex/loom \(if $l and per_turn("codex"; $k) then per_turn("codex"; $k) / $l | f(1) + "x" else "-" end)"
    + " [\(if $r["loom/" + $k].ok and $r["codex/" + $k].ok then $r["codex/" + $k].cpu / $r["loom/" + $k].cpu | f(1) + "x" else "-" end)]"
    + "   claude/loom \(if $l and per_turn("claude"; $k) then per_turn("claude"; $k) / $l | f(1) + "x" else "-" end)"
    + " [\(if $r["loom/" + $k].ok and $r["claude/" + $k].ok then $r["claude/" + $k].cpu / $r["loom/" + $k].cpu | f(1) + "x" else "-" end)]" ]
| .[]
