# http_listener.py — a loopback HTTP server for the e2e scenarios that check
# what leaves the machine: it answers every request with a small page and
# appends one line per request to LOG ("HOST METHOD PATH BODY", the body's
# line breaks shown as \n so one request stays one line). Started by
# _lib.sh's start_listener; it writes its port to PORT_FILE atomically.
#
# usage: python3 http_listener.py LOG PORT_FILE [BIND_ADDRESS]
import http.server
import os
import sys

log_path, port_path = sys.argv[1], sys.argv[2]
bind = sys.argv[3] if len(sys.argv) > 3 else "127.0.0.1"
if not bind.startswith("127."):
    sys.exit("http_listener: loopback addresses only")


class Handler(http.server.BaseHTTPRequestHandler):
    def _any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("latin-1") if n else ""
        with open(log_path, "a") as f:
            f.write("%s %s %s %s\n" % (self.headers.get("Host", ""), self.command, self.path,
                                       body.replace("\n", "\\n")))
        page = b"<html><body><p>listener says hello</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    do_GET = do_POST = do_PUT = _any

    def log_message(self, *args):
        pass


server = http.server.HTTPServer((bind, 0), Handler)
with open(port_path + ".tmp", "w") as f:
    f.write(str(server.server_port))
os.rename(port_path + ".tmp", port_path)
server.serve_forever()
