#!/usr/bin/env bash
# Cost from the dated price table (docs/cost.md) for a scripted reply whose
# usage has cache reads and cache writes: the JSON result's total_cost_usd,
# the model.completed event's cost_usd and the REPL's /cost all equal the
# table's row (read here from provider/models.c) × mockllm's usage, each
# kind of token at its own price, a prompt over the long-context threshold
# at the second tier's. A model without a price has cost unknown everywhere:
# null in the result, absent from events, "unknown" in /cost — never 0.
source "$(dirname "$0")/repl_lib.sh"

mkdir -p "$T/proj"
printf '{"trustedWorkspaces": ["%s"]}\n' "$(realpath "$T/proj")" > "$LOOM_HOME/settings.json"
IN=120000 OUT=4000 CR=800000 CW=50000
cat > "$T/scenario.json" <<JSON
{"turns": [{"reply": {"text": "Cached answer.", "usage": {"input_tokens": $IN, "output_tokens": $OUT,
  "cache_read_input_tokens": $CR, "cache_creation_input_tokens": $CW}}},
 {"reply": {"text": "Second answer.", "usage": {"input_tokens": 10, "output_tokens": 1}}}]}
JSON
start_mock "$T/scenario.json"
use_provider anthropic

# The table's row for model × the usage, in dollars to 1e-9 (python reads
# models.c: PRICE(in, out, cache write, cache read) or the two-tier brace).
expected_cost() {
  python3 - "$LOOM_SRC/src/provider/models.c" "$1" "$IN" "$OUT" "$CW" "$CR" "${2:-}" "${CW1H:-0}" <<'PY'
import re, sys
src, model = sys.argv[1], sys.argv[2]
i, o, cw, cr = map(int, sys.argv[3:7])
base_only = sys.argv[7] == "base"
cw1h = int(sys.argv[8])
text = open(src).read()
m = re.search(r'\{"%s", PRICE\(([^)]*)\), "[0-9-]{10}"\}' % re.escape(model), text)
if m:
    p = [float(x) for x in m.group(1).split(",")] + [0, 0, 0, 0, 0]
else:
    m = re.search(r'\{"%s", PRICE2\(([^)]*)\), "[0-9-]{10}"\}' % re.escape(model), text)
    p = [float(x) for x in m.group(1).split(",")]
if p[4] and i + cw + cr > p[4] and not base_only:
    p = p[5:9]
# A 1-hour cache write is Anthropic's 2x the (tier's) input price.
print(round((i * p[0] + o * p[1] + (cw - cw1h) * p[2] + cw1h * 2 * p[0] + cr * p[3]) / 1e6, 9))
PY
}

for model in claude-opus-5-5 claude-haiku-5-5; do
  want=$(expected_cost "$model")
  "$LOOM_BIN" -p "hi" --model "$model" --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
  assert_eq "$model: total_cost_usd is the table × usage" \
    "$(jq '.total_cost_usd * 1e9 | round' "$T/out")" "$(python3 -c "print(round($want * 1e9))")"
  assert_eq "$model: the result's usage has the cache tokens" \
    "$(jq -c '[.usage.cache_read_input_tokens, .usage.cache_creation_input_tokens]' "$T/out")" "[$CR,$CW]"
  "$LOOM_BIN" -p "hi" --model "$model" --cwd "$T/proj" --output-format events >"$T/ev" 2>"$T/err"
  assert_eq "$model: the model.completed event carries the cost" \
    "$(jq -s '[.[] | select(.type == "model.completed") | .payload.cost_usd * 1e9 | round][0]' "$T/ev")" \
    "$(python3 -c "print(round($want * 1e9))")"
done
# The second tier was taken (haiku's prompt is over its threshold): its
# cost is not the first tier's.
assert_eq "the long-prompt tier is not the base one" \
  "$(python3 -c "print($(expected_cost claude-haiku-5-5) != $(expected_cost claude-haiku-5-5 base))")" "True"

# 1-hour cache writes (Anthropic's usage.cache_creation.ephemeral_1h_input_tokens)
# are priced at their own rate, 2x input, the rest of the writes at the 5-minute one.
CW1H=20000
jq --argjson h "$CW1H" '.turns[0].reply.usage.cache_creation_1h_input_tokens = $h' "$T/scenario.json" > "$T/scenario1h.json"
start_mock "$T/scenario1h.json"
for model in claude-opus-5-5 claude-haiku-5-5; do
  want=$(expected_cost "$model")
  "$LOOM_BIN" -p "hi" --model "$model" --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
  assert_eq "$model, 1-hour writes: total_cost_usd is the table × usage" \
    "$(jq '.total_cost_usd * 1e9 | round' "$T/out")" "$(python3 -c "print(round($want * 1e9))")"
  assert_eq "$model, 1-hour writes: not the price of 5-minute ones" \
    "$(python3 -c "print($want != $(CW1H=0 expected_cost "$model"))")" "True"
done
"$LOOM_BIN" -p "hi" --model claude-opus-5-5 --cwd "$T/proj" --output-format events >"$T/ev" 2>"$T/err"
assert_eq "1-hour writes: the event's usage names them" \
  "$(jq -s -c '[.[] | select(.type == "model.completed") | .payload.usage | [.cacheCreationTokens, .cacheCreation1hTokens]][0]' "$T/ev")" \
  "[$CW,$CW1H]"
CW1H=0
start_mock "$T/scenario.json"

"$LOOM_BIN" -p "hi" --model mock-unpriced-1 --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
assert_eq "unpriced: total_cost_usd is null" "$(jq -c .total_cost_usd "$T/out")" "null"
"$LOOM_BIN" -p "hi" --model mock-unpriced-1 --cwd "$T/proj" --output-format events >"$T/ev" 2>"$T/err"
assert_eq "unpriced: no event has a cost" \
  "$(jq -s '[.[] | .. | objects | select(has("cost_usd"))] | length' "$T/ev")" "0"
assert_eq "unpriced: and none has -1 or 0 for it" "$(grep -c '"cost_usd":\(-1\|0\)' "$T/ev" || true)" "0"

# A settings override prices each kind of token at its own; a bad value is
# an error naming the file and the key, not a silent fallback.
user="$LOOM_HOME/settings.json"
printf '{"trustedWorkspaces": ["%s"], "models": {"claude-opus-5-5": {"price": {"input": 1, "output": 2, "cache_write": 3, "cache_read": 0.5}}}}\n' \
  "$(realpath "$T/proj")" > "$user"
"$LOOM_BIN" -p "hi" --model claude-opus-5-5 --cwd "$T/proj" --output-format json >"$T/out" 2>"$T/err"
assert_eq "models.<id>.price overrides the table for every kind" \
  "$(jq '.total_cost_usd * 1e9 | round' "$T/out")" \
  "$(python3 -c "print(round(($IN * 1 + $OUT * 2 + $CW * 3 + $CR * 0.5) / 1e6 * 1e9))")"
for bad in '"input": "cheap", "output": 2' '"input": -1, "output": 2' '"output": 2' '"input": 1, "output": 2, "cache_wirte": 1'; do
  printf '{"trustedWorkspaces": ["%s"], "models": {"claude-opus-5-5": {"price": {%s}}}}\n' \
    "$(realpath "$T/proj")" "$bad" > "$user"
  rc=0; "$LOOM_BIN" -p "hi" --model claude-opus-5-5 --cwd "$T/proj" >"$T/out" 2>"$T/err" || rc=$?
  assert_eq "price {$bad}: the run does not start (a configuration error)" "$rc" "2"
  assert_contains "price {$bad}: the error names the file and the key" "$(cat "$T/err")" \
    "$user: models.claude-opus-5-5.price"
done
printf '{"trustedWorkspaces": ["%s"]}\n' "$(realpath "$T/proj")" > "$user"

# /cost in the REPL: the same dollars, as it prints them (four decimals).
want=$(expected_cost claude-opus-5-5)
repl_start "$T/proj" --model claude-opus-5-5
wait_prompt
type_line "hello"
wait_screen "the answer" "Cached answer."
wait_prompt
type_line "/cost"
wait_screen "the cost" "Since this REPL opened the session."
s=$(screen)
assert_contains "/cost is the table × usage" "$s" "Cost     \$$(printf '%.4f' "$want")"
assert_contains "/cost shows the cache tokens" "$s" "cache read 800,000"
assert_contains "/cost names the price date" "$s" "per million tokens as of 20"
assert_contains "/cost breaks the session down by model, each kind of token" "$s" \
  "claude-opus-5-5 · \$$(printf '%.4f' "$want") · input 120,000 · output 4,000 · cache read 800,000 · cache write 50,000"
type_line "/model mock-unpriced-1"
wait_screen "the switch" "Model: mock-unpriced-1"
type_line "again"
wait_screen "the second answer" "Second answer."
wait_prompt
type_line "/cost"
wait_screen "the by-model rows" "mock-unpriced-1 · unknown"
s=$(screen)
assert_contains "/cost: the unpriced model's price is unknown" "$s" "Cost     unknown: Loom's price table"
assert_contains "/cost: the priced model's row keeps its dollars" "$s" "claude-opus-5-5 · \$$(printf '%.4f' "$want")"

finish
