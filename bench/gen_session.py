#!/usr/bin/env python3
"""bench/gen_session.py OUT N [SUMMARY_EVERY [REWIND_EVERY]] — writes a
session file of about N records in the format Loom writes
(docs/session-format.md): a session-meta and a title, then turns of user
message / function_call / function_call_result / assistant message, a
file-history snapshot every 50 turns, a compaction summary every
SUMMARY_EVERY records (default 1000, about a context window's worth: a
session this long has been compacted many times), and a rewind (a user
message continuing from an earlier record, leaving a branch behind) every
REWIND_EVERY turns (default 997). The bytes are the same for the same
arguments, so two runs resume the same file. Used by bench/resume.sh and
tests/e2e/session_index.sh."""
import json
import sys

out, n = sys.argv[1], int(sys.argv[2])
summary_every = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
rewind_every = int(sys.argv[4]) if len(sys.argv) > 4 else 997
sid = "0190a000-0000-7000-8000-000000000000"
seq = 0


def nid():
    global seq
    seq += 1
    return "0190a000-%04x-7%03x-8%03x-%012x" % (seq >> 28 & 0xffff, seq >> 16 & 0xfff,
                                             seq >> 4 & 0xfff, seq)


def ts(i):
    return "2026-01-01T%02d:%02d:%02d.%03dZ" % (i // 3600000 % 24, i // 60000 % 60,
                                                 i // 1000 % 60, i % 1000)


filler = "lorem ipsum dolor sit amet " * 27
with open(out, "w") as f:
    count = 0

    def put(rec, parent, extra_first=()):
        global count
        rec_id = nid()
        line = {"type": rec.pop("type"), "id": rec_id, "parentId": parent}
        for k in extra_first:
            line[k] = rec.pop(k)
        line["timestamp"] = ts(count)
        line["sessionId"] = sid
        line.update(rec)
        f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")
        count += 1
        return rec_id

    put({"type": "session-meta", "cwd": "/tmp", "version": "bench", "provider": "anthropic",
         "model": "claude-sonnet-4-5"}, None)
    put({"type": "title", "title": "a long session for the resume bench",
         "source": "first-prompt"}, None)
    leaf = None
    history = []
    turn = 0
    next_summary = summary_every
    while count < n - 5:
        if count >= next_summary:
            next_summary += summary_every
            leaf = put({"type": "summary", "logicalParentId": leaf,
                        "summary": "Summary of turns so far: " + filler,
                        "providerData": {"compactType": "auto", "isCompacted": True}}, None,
                       ("logicalParentId",))
            history = [leaf]
            continue
        parent = leaf
        if turn and turn % rewind_every == 0 and len(history) > 10:
            parent = history[-9]  # a rewind: the turns after it stay as a branch
        turn += 1
        leaf = put({"type": "message", "role": "user",
                    "content": [{"type": "text", "text": "turn %d: read the file. %s" %
                                 (turn, filler[:200])}]}, parent)
        call = "toolu_%08d" % turn
        leaf = put({"type": "function_call", "callId": call, "name": "Read",
                    "arguments": json.dumps({"file_path": "/tmp/f%d.txt" % turn})}, leaf)
        leaf = put({"type": "function_call_result", "callId": call, "status": "completed",
                    "output": "     1\t" + filler * 2}, leaf)
        leaf = put({"type": "message", "role": "assistant",
                    "content": [{"type": "text", "text": "done with turn %d. %s" %
                                 (turn, filler[:300])}],
                    "providerData": {"usage": {"input_tokens": 1000, "output_tokens": 50},
                                     "stopReason": "end_turn"}}, leaf)
        history.append(leaf)
        if turn % 50 == 0:
            put({"type": "file-history-snapshot", "messageId": leaf,
                 "snapshot": {"messageId": leaf, "trackedFileBackups": {},
                              "timestamp": ts(count)}, "isSnapshotUpdate": False}, None)
