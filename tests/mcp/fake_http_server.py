#!/usr/bin/env python3
"""fake_http_server.py — a loopback MCP Streamable HTTP server that misbehaves
on purpose, for tests/unit/test_mcp_http.c.

Prints its port on stdout, then serves until killed. The first path segment
picks the behaviour:

  /expire  initialize answers with Mcp-Session-Id "s1" (then "s2", ...); the
           next POST that carries a session gets 404 once (the server
           "restarted"), later ones are answered normally.
  /fail    every POST gets HTTP 500 with a short body.
  /retry   tools/call answers with an SSE stream holding only a priming
           event (id "e1", retry 300) and closes it; a GET with
           Last-Event-ID "e1" gets the response on a new SSE stream.
  /poll    like /retry, but the server "polls": every resumed GET gets only
           a new priming event (q1, q2, ...) and is closed, until the
           seventh, which carries the response.
  /noid    tools/call answers with an SSE stream that ends without the
           response and without an event id to resume from.
  /huge    tools/call answers with an SSE event that never ends: data
           lines past the client's 16 MiB message cap.
  /push    the standalone GET stream: without Last-Event-ID it sends
           notifications/tools/list_changed (id "p1", retry 100) and ends;
           with "p1" it sends notifications/resources/list_changed (id
           "p2") and ends; with "p2": 405.
  any      GET without Last-Event-ID: 405 (no standalone stream offered).
           DELETE: 200. GET /log: what was received, as a JSON array of
           {method, path, session, last_event_id, rpc, t} (t in seconds).

Only the Python standard library; threaded, so streams may overlap.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = []
LOCK = threading.Lock()
STATE = {"sessions": 0, "expired_once": False, "pending": None}


def record(handler, rpc=None):
    with LOCK:
        LOG.append({
            "method": handler.command,
            "path": handler.path,
            "session": handler.headers.get("Mcp-Session-Id"),
            "version": handler.headers.get("MCP-Protocol-Version"),
            "accept": handler.headers.get("Accept"),
            "last_event_id": handler.headers.get("Last-Event-ID"),
            "rpc": rpc,
            "t": time.monotonic(),
        })


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, obj, extra=None):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def send_plain(self, status, text):
        body = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def sse(self, text):
        # Close-delimited: the end of the connection is the end of the stream.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(text.encode())
        self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        if self.path == "/log":
            with LOCK:
                self.send_json(200, LOG)
            return
        record(self)
        last = self.headers.get("Last-Event-ID")
        if self.path.startswith("/retry") and last == "e1":
            with LOCK:
                rid = STATE["pending"]
            msg = {"jsonrpc": "2.0", "id": rid,
                   "result": {"content": [{"type": "text", "text": "resumed"}]}}
            self.sse("id: e2\nevent: message\ndata: " + json.dumps(msg) + "\n\n")
            return
        if self.path.startswith("/poll") and last and last.startswith("q"):
            n = int(last[1:])
            if n < 6:
                self.sse("id: q%d\nretry: 50\ndata: \n\n" % (n + 1))
                return
            with LOCK:
                rid = STATE["pending"]
            msg = {"jsonrpc": "2.0", "id": rid, "result": {"content": []}}
            self.sse("event: message\ndata: " + json.dumps(msg) + "\n\n")
            return
        if self.path.startswith("/push") and last in (None, "p1"):
            what, nid = ("tools", "p1") if last is None else ("resources", "p2")
            note = {"jsonrpc": "2.0", "method": "notifications/%s/list_changed" % what}
            self.sse(": ping\nid: %s\nretry: 100\ndata: %s\n\n" % (nid, json.dumps(note)))
            return
        self.send_plain(405, "no standalone stream")

    def do_DELETE(self):
        record(self)
        self.send_plain(200, "")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        try:
            rpc = json.loads(raw)
        except ValueError:
            rpc = None
        record(self, rpc)
        path = self.path
        if path.startswith("/fail"):
            self.send_plain(500, "boom: the fake server fails every POST\n")
            return
        method = rpc.get("method") if isinstance(rpc, dict) else None
        rid = rpc.get("id") if isinstance(rpc, dict) else None
        session = self.headers.get("Mcp-Session-Id")
        if method == "initialize":
            with LOCK:
                STATE["sessions"] += 1
                sid = "s%d" % STATE["sessions"]
            self.send_json(200, {"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-http", "version": "1"}}},
                {"Mcp-Session-Id": sid})
            return
        if path.startswith("/expire") and session:
            with LOCK:
                first = not STATE["expired_once"]
                STATE["expired_once"] = True
            if first:
                self.send_plain(404, "session not found")
                return
        if rid is None:
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path.startswith("/poll") and method == "tools/call":
            with LOCK:
                STATE["pending"] = rid
            self.sse("id: q0\nretry: 50\ndata: \n\n")
            return
        if path.startswith("/huge") and method == "tools/call":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            line = ("data: " + "x" * (1 << 20) + "\n").encode()
            try:
                for _ in range(20):
                    self.wfile.write(line)
            except OSError:
                pass  # the client hung up, as it should
            self.close_connection = True
            return
        if path.startswith("/noid") and method == "tools/call":
            self.sse(": nothing to see\n\n")
            return
        if path.startswith("/retry") and method == "tools/call":
            with LOCK:
                STATE["pending"] = rid
            self.sse("id: e1\nretry: 300\ndata: \n\n")
            return
        self.send_json(200, {"jsonrpc": "2.0", "id": rid, "result": {"tools": []}})


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
