# derive_expected.py — a reference reading of every corpus file, written from
# the accumulation rules the official SDKs document (not from Loom's code),
# used once to draft MANIFEST.json's "expect" values, which were then checked
# by hand against the SDKs' own test assertions where they exist. Not run by
# the tests: the manifest is the fixed expectation, so a change here never
# moves a test silently.
#
# Rules, with their sources:
# - SSE: events end at a blank line; a final event the stream ends without a
#   blank line is still dispatched (what anthropic-sdk-python's _streaming.py
#   SSEDecoder and openai-python's do at end of input); lines starting ":"
#   are comments; "data: [DONE]" ends a Chat stream.
# - Anthropic: text = text_delta pieces of text blocks in order; thinking =
#   thinking_delta pieces; tool_use input = the joined input_json_delta text
#   parsed as JSON (or the content_block_start input when no delta came);
#   usage = message_start's usage, each non-null field of message_delta's
#   usage replacing it (anthropic-sdk-typescript src/lib/MessageStream.ts);
#   reasoning tokens = output_tokens_details.thinking_tokens.
# - Chat: choice 0's delta.content (and delta.refusal) concatenated; tool
#   calls grouped by index, arguments joined; usage from the final chunk,
#   input = prompt_tokens - cached_tokens (Loom counts cache reads apart, as
#   Anthropic does; tests/mockllm/README.md "Usage").
# - Responses: text = output_text.delta pieces, or — when none came — the
#   output_text parts of the message items in output_item.done (Codex's
#   fixture core/tests/cli_responses_fixture.sse relies on it); function calls
#   from output_item.done; usage from the terminal response.
#
# usage: python3 derive_expected.py FILE  → prints the expected turn as JSON
import json
import sys


def sse_events(raw):
    events, data, name = [], [], None
    for line in raw.split("\n") + [""]:
        line = line.rstrip("\r")
        if line == "":
            if data:
                events.append((name, "\n".join(data)))
            data, name = [], None
        elif line.startswith(":"):
            continue
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" ") if line[5:6] == " " else line[5:])
        elif line.startswith("event:"):
            name = line[6:].strip()
    return events


def usage(i=0, o=0, cr=0, cc=0, r=0):
    return {"inputTokens": i, "outputTokens": o, "cacheReadTokens": cr,
            "cacheCreationTokens": cc, "reasoningTokens": r}


def anthropic_msg(m):
    t = {"text": "", "reasoning": "", "tool_calls": []}
    for b in m.get("content", []):
        if b["type"] == "text":
            t["text"] += b["text"]
        elif b["type"] == "thinking":
            t["reasoning"] += b["thinking"]
        elif b["type"] == "tool_use":
            t["tool_calls"].append({"name": b["name"], "arguments": b["input"]})
    u = m.get("usage") or {}
    t["usage"] = usage(u.get("input_tokens") or 0, u.get("output_tokens") or 0,
                       u.get("cache_read_input_tokens") or 0,
                       u.get("cache_creation_input_tokens") or 0,
                       (u.get("output_tokens_details") or {}).get("thinking_tokens") or 0)
    t["stop_reason"] = m.get("stop_reason")
    return t


def anthropic_sse(raw):
    msg, blocks, partial = None, {}, {}
    for _, data in sse_events(raw):
        e = json.loads(data)
        ty = e.get("type")
        if ty == "message_start":
            msg = e["message"]
        elif ty == "content_block_start":
            blocks[e["index"]] = dict(e["content_block"])
        elif ty == "content_block_delta":
            b, d = blocks[e["index"]], e["delta"]
            if d["type"] == "text_delta":
                b["text"] = b.get("text", "") + d["text"]
            elif d["type"] == "thinking_delta":
                b["thinking"] = b.get("thinking", "") + d["thinking"]
            elif d["type"] == "input_json_delta":
                partial[e["index"]] = partial.get(e["index"], "") + d["partial_json"]
        elif ty == "message_delta":
            msg["stop_reason"] = e["delta"].get("stop_reason")
            for k, v in (e.get("usage") or {}).items():
                if v is not None:
                    msg["usage"][k] = v
        elif ty == "error":
            return {"error": e["error"]["type"]}
    for i, p in partial.items():
        try:
            blocks[i]["input"] = json.loads(p) if p else {}
        except ValueError:
            blocks[i]["input"] = {"__unparsed__": p}
    msg["content"] = [blocks[i] for i in sorted(blocks)]
    return anthropic_msg(msg)


def chat_usage(u):
    u = u or {}
    cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return usage((u.get("prompt_tokens") or 0) - cached, u.get("completion_tokens") or 0, cached, 0,
                 (u.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0)


STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens",
        "content_filter": "refusal", None: None}


def chat_sse(raw):
    t = {"text": "", "reasoning": "", "tool_calls": []}
    calls, fr, u = {}, None, None
    for _, data in sse_events(raw):
        if data == "[DONE]":
            break
        e = json.loads(data)
        if "error" in e:
            return {"error": e["error"].get("type")}
        if e.get("usage"):
            u = e["usage"]
        for c in e.get("choices", []):
            if c["index"] != 0:
                continue
            d = c.get("delta") or {}
            t["text"] += (d.get("content") or "") + (d.get("refusal") or "")
            for tc in d.get("tool_calls") or []:
                k = calls.setdefault(tc["index"], {"name": "", "arguments": ""})
                f = tc.get("function") or {}
                k["name"] += f.get("name") or ""
                k["arguments"] += f.get("arguments") or ""
            fr = c.get("finish_reason") or fr
    for i in sorted(calls):
        t["tool_calls"].append({"name": calls[i]["name"], "arguments": json.loads(calls[i]["arguments"] or "{}")})
    t["usage"], t["stop_reason"] = chat_usage(u), STOP[fr]
    return t


def chat_body(b):
    m = b["choices"][0]["message"]
    t = {"text": (m.get("content") or "") + (m.get("refusal") or ""), "reasoning": "",
         "tool_calls": [{"name": c["function"]["name"], "arguments": json.loads(c["function"]["arguments"])}
                        for c in m.get("tool_calls") or []]}
    t["usage"], t["stop_reason"] = chat_usage(b.get("usage")), STOP[b["choices"][0]["finish_reason"]]
    return t


def responses_usage(u):
    u = u or {}
    cached = (u.get("input_tokens_details") or {}).get("cached_tokens") or 0
    return usage((u.get("input_tokens") or 0) - cached, u.get("output_tokens") or 0, cached, 0,
                 (u.get("output_tokens_details") or {}).get("reasoning_tokens") or 0)


def responses_items(items, t, with_text):
    for it in items:
        if it.get("type") == "message" and with_text:
            for p in it.get("content", []):
                t["text"] += p.get("text", "") if p["type"] == "output_text" else p.get("refusal", "")
        elif it.get("type") == "function_call":
            t["tool_calls"].append({"name": it["name"], "arguments": json.loads(it["arguments"] or "{}")})


def responses_final(r, t):
    t["usage"] = responses_usage(r.get("usage"))
    if r.get("status") == "incomplete":
        t["stop_reason"] = "max_tokens"
    else:
        t["stop_reason"] = "tool_use" if t["tool_calls"] else "end_turn"
    return t


def responses_sse(raw):
    t = {"text": "", "reasoning": "", "tool_calls": []}
    done_items, saw_delta = [], False
    for _, data in sse_events(raw):
        if data == "[DONE]":
            break
        e = json.loads(data)
        ty = e.get("type")
        if ty in ("response.output_text.delta", "response.refusal.delta"):
            t["text"] += e["delta"]
            saw_delta = True
        elif ty == "response.reasoning_summary_text.delta":
            t["reasoning"] += e["delta"]
        elif ty == "response.output_item.done":
            done_items.append(e["item"])
        elif ty == "response.failed":
            return {"error": (e["response"].get("error") or {}).get("code")}
        elif ty == "error":
            return {"error": e.get("code")}
        elif ty in ("response.completed", "response.incomplete"):
            responses_items(done_items, t, not saw_delta)
            return responses_final(e["response"], t)
    return {"error": "stream ended without response.completed"}


def responses_body(b):
    t = {"text": "", "reasoning": "", "tool_calls": []}
    responses_items(b.get("output", []), t, True)
    return responses_final(b, t)


def derive(path):
    raw = open(path, encoding="utf-8").read()
    api = path.split("/")[-2]
    if path.endswith(".sse"):
        return {"anthropic": anthropic_sse, "chat": chat_sse, "responses": responses_sse}[api](raw)
    b = json.loads(raw)
    if "error" in b and b.get("type") == "error":
        return {"error": b["error"]["type"]}
    return {"anthropic": anthropic_msg, "chat": chat_body, "responses": responses_body}[api](b)


if __name__ == "__main__":
    print(json.dumps(derive(sys.argv[1]), ensure_ascii=False))
