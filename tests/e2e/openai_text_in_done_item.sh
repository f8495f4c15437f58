#!/usr/bin/env bash
# A Responses stream whose message text arrives only in output_item.done (no
# output_text.delta events; the shape of Codex's fixture openai/codex
# codex-rs/core/tests/cli_responses_fixture.sse) is printed and emitted as
# token.delta, exactly once; a stream with deltas and a done item repeating
# them is not printed twice.
source "$(dirname "$0")/_lib.sh"

start_mock "$SCENARIOS/responses_whole_items.json"
use_provider openai-responses
events=$("$LOOM_BIN" -p "Say it whole" --output-format events)
text=$(jq -rj 'select(.type=="token.delta" and .payload.channel=="text") | .payload.text' <<<"$events")
assert_eq "whole item: token.delta carries the text once" "$text" "fixture hello, whole: ünïcødé ✓"

out=$("$LOOM_BIN" -p "Say it in deltas")
assert_eq "deltas then done: printed once" "$out" "deltas and a done item, shown once"
finish
