"""A stand-in search API for tests/e2e/web_search.sh, in SearXNG's JSON
shape: GET /search?q=... answers {"results": [{title, url, content}]},
the same four results whatever the query; GET /fail answers 500. Every
query is appended to the log file. Usage: _search_server.py PORTFILE LOG"""
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

RESULTS = [
    {"title": "Loom docs", "url": "https://docs.example.org/loom", "content": "The Loom harness documentation."},
    {"title": "Example", "url": "https://www.example.com/b", "content": "An example page."},
    {"title": "Blocked", "url": "https://blocked.example.net/c", "content": "A page the settings block."},
    {"title": "Other", "url": "http://evil.test/d", "content": "Another site."},
    {"title": "Not a page", "url": "ftp://files.example.org/x", "content": "Not http."},
]


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        u = urlparse(self.path)
        with open(sys.argv[2], "a", encoding="utf-8") as f:
            f.write(json.dumps({"path": u.path, "q": parse_qs(u.query).get("q", [""])[0]}) + "\n")
        if u.path != "/search":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"down")
            return
        body = json.dumps({"query": parse_qs(u.query).get("q", [""])[0], "results": RESULTS}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
