# wiki_server.py — a loopback stand-in for an internal wiki's JSON search
# endpoint (docs/knowledge.md, internal_wiki), for e2e.knowledge_wiki: POST
# /search answers {"results": [...]} from ANSWERS (a JSON file, read on
# each request so a scenario can change it), POST /broken answers text that
# is not JSON; every request body is appended to LOG, one line each. Writes
# its port to PORT_FILE atomically.
#
# usage: python3 wiki_server.py ANSWERS LOG PORT_FILE
import http.server
import os
import sys

answers, log_path, port_path = sys.argv[1], sys.argv[2], sys.argv[3]


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8") if n else ""
        with open(log_path, "a") as f:
            f.write("%s %s\n" % (self.path, body.replace("\n", "\\n")))
        if self.path == "/search":
            with open(answers, "rb") as f:
                page = f.read()
            ctype = "application/json"
        else:
            page, ctype = b"<html>maintenance</html>", "text/html"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args):
        pass


server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
tmp = port_path + ".tmp"
with open(tmp, "w") as f:
    f.write("%d\n" % server.server_address[1])
os.rename(tmp, port_path)
server.serve_forever()
