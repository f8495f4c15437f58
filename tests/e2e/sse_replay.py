# sse_replay.py — a loopback HTTP server that answers model requests with
# recorded bytes, for provider_recorded_streams.sh (tests/corpus/).
#
# Each POST takes the next line of QUEUE ("STATUS FILE", consumed in order;
# the server rewrites QUEUE without it) and answers with FILE's bytes exactly
# as stored — a .sse file as text/event-stream, anything else as
# application/json — so Loom's real HTTP client and decoders see what the
# API sent when it was recorded, byte for byte, including an unterminated
# last event. When QUEUE is empty it answers with a short closing reply in
# the format the request's path names, streamed or not as it asked
# (FOLLOWUP_DIR/<api>.sse or .json), so a
# recorded tool call can be followed by the next turn. Every request body is
# appended to LOG as one JSON line {"path", "body"}: the test reads what Loom
# sent back on the next turn from there.
#
# Single-threaded on purpose: Loom makes one model request at a time here.
#
# usage: python3 sse_replay.py QUEUE LOG PORT_FILE FOLLOWUP_DIR
import http.server
import json
import os
import sys

queue_path, log_path, port_path, followup_dir = sys.argv[1:5]


def next_reply():
    with open(queue_path) as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    if not lines:
        return None
    with open(queue_path + ".tmp", "w") as f:
        f.write("".join(l + "\n" for l in lines[1:]))
    os.rename(queue_path + ".tmp", queue_path)
    status, path = lines[0].split(" ", 1)
    return int(status), path


def api_of(path):
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "chat"
    return "responses"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace") if n else ""
        with open(log_path, "a") as f:
            f.write(json.dumps({"path": self.path, "body": body}) + "\n")
        reply = next_reply()
        if reply is None:
            try:
                streaming = json.loads(body).get("stream") is True
            except ValueError:
                streaming = False
            ext = ".sse" if streaming else ".json"
            reply = (200, os.path.join(followup_dir, api_of(self.path) + ext))
        status, path = reply
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(status)
        ctype = "text/event-stream" if path.endswith(".sse") else "application/json"
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_replay")
        self.send_header("x-request-id", "req_replay")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open(port_path + ".tmp", "w") as f:
    f.write(str(server.server_port))
os.rename(port_path + ".tmp", port_path)
server.serve_forever()
