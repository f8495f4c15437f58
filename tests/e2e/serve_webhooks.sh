#!/usr/bin/env bash
# serve_webhooks.sh — a tenant webhook to a loopback receiver
# (tests/serve/webhook_receiver.mjs): run.completed, approval.requested,
# artifact.created, policy.denied arrive signed; a delivery answered 500
# twice is retried (tests/serve/webhooks.mjs).
source "$(dirname "$0")/_lib.sh"
export WEBHOOK_LOG="$T/webhooks.jsonl"
node "$LOOM_SRC/tests/serve/webhook_receiver.mjs" "$T/receiver.port" "$WEBHOOK_LOG" \
  whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw 2 > "$T/receiver.out" 2>&1 &
RECEIVER_PID=$!
for _ in $(seq 1 250); do [ -s "$T/receiver.port" ] && break; sleep 0.02; done
[ -s "$T/receiver.port" ] || { cat "$T/receiver.out" >&2; echo "the webhook receiver did not start" >&2; exit 1; }
export SERVE_WEBHOOK_URL="http://127.0.0.1:$(cat "$T/receiver.port")/hooks/loom"
source "$LOOM_SRC/tests/e2e/_serve_lib.sh"

serve_up "$(serve_scenario serve_webhooks)"
serve_node webhooks.mjs
serve_finish
