#!/usr/bin/env python3
"""fake_server.py — a small, configurable MCP server for Loom's tests.

It speaks MCP 2025-11-25 over stdio (newline-delimited JSON-RPC 2.0), with
the Python 3 standard library only. Every option can be given on the
command line or in the environment as FAKE_MCP_<NAME> (upper case, '-' as
'_'): `--tools 200` or FAKE_MCP_TOOLS=200; a flag is on with FAKE_MCP_X=1.

Tools (default set, unless --tools N asks for N generated ones instead):
  echo {text}        returns text
  add {a, b}         returns the sum as text, and as structuredContent
  slow {ms}          sends notifications/progress every 100 ms when the call
                     carries a progressToken; answers "done" after ms; a
                     notifications/cancelled for it stops it: it answers
                     nothing and writes "cancelled <id>" to --log
  big {bytes}        answers with a message of about that many bytes
  junk               writes a line that is not JSON, then answers "ok"
  ping_client        pings the client; answers "pong" when it answered
  roots              asks roots/list; answers its result as JSON text
  log {text}         sends notifications/message (level info), answers "ok"
Options:
  --tools N          N generated tools tool_000 … (description, small schema)
  --page-size N      tools/list (and resources/list) pages of N with nextCursor
  --crash-on TOOL    exit(1) when TOOL is called
  --instructions T   the instructions of the initialize result
  --list-changed     tool add_tool: adds tool `extra`, sends tools/list_changed
  --resources        two resources, one template, resources/read, subscribe
  --prompts          prompt `greet` with argument `name`
  --elicit           tool `ask`: sends elicitation/create, answers with the reply
  --annotations      tools read_thing (readOnlyHint) and delete_thing
                     (destructiveHint)
  --pid-file FILE    writes its pid there at start
  --log FILE         appends a line per event: "recv <method>",
                     "cancelled <id>", "meta <method> <_meta JSON>"
  --protocol V       answer initialize with version V (default: the client's
                     when it is 2025-11-25, 2025-06-18 or 2025-03-26, else
                     2025-11-25)
  --stateless        also answer server/discover (supportedVersions
                     2026-07-28 and 2025-11-25), and log each request's _meta
  --log-meta         log each request's _meta (as --stateless does)
  --ignore-eof       keep running after stdin closes (tests SIGTERM)
  --ignore-term      ignore SIGTERM too (tests SIGKILL)
  --discover-hang    never answer server/discover (tests the fallback timeout)
  --tool-desc-bytes N  with --tools: each generated tool's description padded
                     to about N bytes (real servers' tools run to hundreds)
  --delay-init MS    answer initialize only after MS milliseconds (a slow
                     server joining after the first model request)
  --search           tools `web_search {query}` (Brave-shaped JSON as text:
                     {"web": {"results": [...]}}, the query echoed in the first
                     title; query "broken" answers text that is not JSON,
                     "error" an isError result) and `web_search_structured
                     {q}` (SearXNG-shaped structuredContent), for WebSearch
  --bad-structured   tool `weather`: its outputSchema wants a number at
                     temperature, its structuredContent has a string there

Threading: the main thread reads stdin; each tools/call runs on a thread
of its own so a slow call never blocks others; stdout writes are one line
each under a lock.
"""

import json
import os
import signal
import sys
import threading
import time

# ---- options ---------------------------------------------------------------

FLAGS = ["list-changed", "resources", "prompts", "elicit", "annotations", "stateless",
         "ignore-eof", "ignore-term", "discover-hang", "bad-structured", "log-meta", "search"]
VALUES = ["tools", "page-size", "crash-on", "instructions", "pid-file", "log", "protocol",
          "delay-init", "tool-desc-bytes"]


def parse_options(argv):
    """Options from FAKE_MCP_* first, then argv (which wins)."""
    opts = {}
    for name in FLAGS + VALUES:
        env = os.environ.get("FAKE_MCP_" + name.upper().replace("-", "_"))
        if env is not None:
            opts[name] = (env not in ("", "0")) if name in FLAGS else env
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--"):
            sys.exit("fake_server: unexpected argument " + arg)
        name = arg[2:]
        if name in FLAGS:
            opts[name] = True
        elif name in VALUES and i + 1 < len(argv):
            i += 1
            opts[name] = argv[i]
        else:
            sys.exit("fake_server: unknown option " + arg)
        i += 1
    return opts


OPTS = parse_options(sys.argv[1:])
KNOWN_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26"]

# ---- output ----------------------------------------------------------------

OUT_LOCK = threading.Lock()


def send(msg):
    """One message, one line (json.dumps never writes a raw newline)."""
    line = json.dumps(msg, separators=(",", ":")) + "\n"
    with OUT_LOCK:
        sys.stdout.write(line)
        sys.stdout.flush()


def log(line):
    path = OPTS.get("log")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def result(rid, res):
    send({"jsonrpc": "2.0", "id": rid, "result": res})


def error(rid, code, message):
    send({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def text(t):
    return {"content": [{"type": "text", "text": t}]}


# ---- requests we send the client ---------------------------------------------

NEXT_ID = [0]
WAITING = {}  # our request id -> [threading.Event, answer]
WAIT_LOCK = threading.Lock()


def ask_client(method, params, timeout=30):
    """Sends a request to the client and waits for its answer (a dict with
    result or error), or None at timeout."""
    with WAIT_LOCK:
        NEXT_ID[0] += 1
        rid = "s%d" % NEXT_ID[0]
        slot = [threading.Event(), None]
        WAITING[rid] = slot
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    slot[0].wait(timeout)
    with WAIT_LOCK:
        WAITING.pop(rid, None)
    return slot[1]


# ---- tools -------------------------------------------------------------------

STATE_LOCK = threading.Lock()
CANCELLED = set()  # request ids the client cancelled
EXTRA_TOOLS = []   # added by add_tool


def schema(props, required=None):
    s = {"type": "object", "properties": props}
    if required:
        s["required"] = required
    return s


def tool_list():
    if OPTS.get("tools"):
        n = int(OPTS["tools"])
        pad = int(OPTS.get("tool-desc-bytes") or 0)
        tools = []
        for i in range(n):
            desc = "Generated test tool number %d; echoes its input." % i
            while len(desc) < pad:
                desc += " It answers with the text it was given, unchanged."
            tools.append({"name": "tool_%03d" % i, "description": desc,
                          "inputSchema": schema({"text": {"type": "string"}})})
    else:
        tools = [
            {"name": "echo", "description": "Echoes the text back.",
             "inputSchema": schema({"text": {"type": "string"}}, ["text"])},
            {"name": "add", "description": "Adds two numbers.",
             "inputSchema": schema({"a": {"type": "number"}, "b": {"type": "number"}},
                                   ["a", "b"]),
             "outputSchema": schema({"sum": {"type": "number"}}, ["sum"])},
            {"name": "slow", "description": "Takes ms milliseconds, reporting progress.",
             "inputSchema": schema({"ms": {"type": "integer"}})},
            {"name": "big", "description": "Answers with about bytes bytes.",
             "inputSchema": schema({"bytes": {"type": "integer"}})},
            {"name": "junk", "description": "Writes a line that is not JSON first.",
             "inputSchema": schema({})},
            {"name": "ping_client", "description": "Pings the client.",
             "inputSchema": schema({})},
            {"name": "roots", "description": "Asks the client for its roots.",
             "inputSchema": schema({})},
            {"name": "log", "description": "Sends a log message.",
             "inputSchema": schema({"text": {"type": "string"}})},
        ]
    if OPTS.get("list-changed"):
        tools.append({"name": "add_tool", "description": "Adds the tool extra.",
                      "inputSchema": schema({})})
    if OPTS.get("elicit"):
        tools.append({"name": "ask", "description": "Asks the user a question.",
                      "inputSchema": schema({"question": {"type": "string"}})})
    if OPTS.get("annotations"):
        tools.append({"name": "read_thing", "description": "Reads a thing.",
                      "inputSchema": schema({}),
                      "annotations": {"readOnlyHint": True, "title": "Read a thing"}})
        tools.append({"name": "delete_thing", "description": "Deletes a thing.",
                      "inputSchema": schema({}),
                      "annotations": {"readOnlyHint": False, "destructiveHint": True}})
    if OPTS.get("bad-structured"):
        tools.append({"name": "weather", "description": "Today's weather, structured.",
                      "inputSchema": schema({}), "annotations": {"readOnlyHint": True},
                      "outputSchema": schema({"current": schema(
                          {"temperature": {"type": "number"}}, ["temperature"])},
                          ["current"])})
    if OPTS.get("search"):
        tools.append({"name": "web_search", "description": "Searches the web.",
                      "inputSchema": schema({"query": {"type": "string"}}, ["query"])})
        tools.append({"name": "web_search_structured", "description": "Searches, structured.",
                      "inputSchema": schema({"q": {"type": "string"}}, ["q"])})
    with STATE_LOCK:
        tools.extend(EXTRA_TOOLS)
    return tools


SEARCH_HITS = [("https://docs.example.org/loom", "The Loom harness documentation."),
               ("https://blocked.example.net/x", "A page the settings block."),
               ("https://www.example.com/b", "Another page.")]


def call_search(name, args):
    q = str(args.get("query", args.get("q", "")))
    log("search %s %s" % (name, q))
    if q == "error":
        return {"content": [{"type": "text", "text": "the search index is down"}],
                "isError": True}
    if q == "broken":
        return text("<html>not JSON</html>")
    hits = [{"title": "Result for %s" % q if i == 0 else "Hit %d" % i, "url": u,
             "description": d} for i, (u, d) in enumerate(SEARCH_HITS)]
    if name == "web_search":
        return text(json.dumps({"web": {"results": hits}}))
    r = text("structured results")
    r["structuredContent"] = {"results": [{"title": h["title"], "url": h["url"],
                                           "content": h["description"]} for h in hits]}
    return r


def call_slow(rid, args, meta):
    ms = int(args.get("ms", 1000))
    token = (meta or {}).get("progressToken")
    steps = max(1, ms // 100)
    for i in range(steps):
        time.sleep(ms / 1000.0 / steps)
        with STATE_LOCK:
            if rid in CANCELLED:
                log("cancelled %s" % rid)
                return None  # a cancelled request gets no answer
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": i + 1, "total": steps,
                             "message": "step %d of %d" % (i + 1, steps)}})
    return text("done")


def call_tool(rid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    meta = params.get("_meta")
    if OPTS.get("crash-on") and name == OPTS["crash-on"]:
        sys.stderr.write("fake_server: crashing on %s as asked\n" % name)
        sys.stderr.flush()
        os._exit(1)
    if name == "echo" or (name or "").startswith("tool_"):
        return text(str(args.get("text", "")))
    if name == "add":
        s = args.get("a", 0) + args.get("b", 0)
        r = text(str(s))
        r["structuredContent"] = {"sum": s}
        return r
    if name == "slow":
        return call_slow(rid, args, meta)
    if name == "big":
        return text("x" * int(args.get("bytes", 1024)))
    if name == "junk":
        with OUT_LOCK:
            sys.stdout.write("this line is not JSON\n{\"jsonrpc\":\"1.0\"}\n")
            sys.stdout.flush()
        return text("ok")
    if name == "ping_client":
        a = ask_client("ping", {})
        return text("pong" if a and "result" in a else "no answer: %r" % a)
    if name == "roots":
        a = ask_client("roots/list", {})
        return text(json.dumps(a))
    if name == "log":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "info", "logger": "fake", "data": args.get("text", "")}})
        return text("ok")
    if name == "add_tool" and OPTS.get("list-changed"):
        with STATE_LOCK:
            if not any(t["name"] == "extra" for t in EXTRA_TOOLS):
                EXTRA_TOOLS.append({"name": "extra", "description": "Added at run time.",
                                    "inputSchema": schema({})})
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return text("added")
    if name == "ask" and OPTS.get("elicit"):
        a = ask_client("elicitation/create", {
            "mode": "form", "message": args.get("question", "What is your name?"),
            "requestedSchema": schema({"name": {"type": "string"}}, ["name"])}, timeout=300)
        return text(json.dumps(a.get("result") if a else None))
    if name == "read_thing" or name == "delete_thing":
        return text(name + " done")
    if name == "extra":
        return text("extra here")
    if name in ("web_search", "web_search_structured") and OPTS.get("search"):
        return call_search(name, args)
    if name == "weather" and OPTS.get("bad-structured"):
        r = text("warm")
        r["structuredContent"] = {"current": {"temperature": "warm"}}
        return r
    return {"content": [{"type": "text", "text": "unknown tool %s" % name}], "isError": True}


def run_call(rid, params):
    try:
        r = call_tool(rid, params)
    except Exception as e:  # a test server answers, it does not die
        error(rid, -32603, "fake_server: %s" % e)
        return
    if r is not None:
        result(rid, r)


# ---- resources and prompts ---------------------------------------------------------

RESOURCES = [
    {"uri": "test://readme", "name": "readme", "mimeType": "text/plain",
     "description": "A short text."},
    {"uri": "test://logo", "name": "logo", "mimeType": "image/png"},
]
TEMPLATES = [{"uriTemplate": "test://item/{id}", "name": "item", "mimeType": "text/plain"}]


def read_resource(uri):
    if uri == "test://readme":
        return {"contents": [{"uri": uri, "mimeType": "text/plain", "text": "Hello from readme."}]}
    if uri == "test://logo":
        return {"contents": [{"uri": uri, "mimeType": "image/png", "blob": "iVBORw0KGgo="}]}
    if uri.startswith("test://item/"):
        return {"contents": [{"uri": uri, "mimeType": "text/plain",
                              "text": "item " + uri[len("test://item/"):]}]}
    return None


def page(items, params, key):
    """Pages items by --page-size; the cursor is the next offset."""
    size = int(OPTS.get("page-size") or 0)
    start = int((params or {}).get("cursor") or 0)
    if size <= 0:
        return {key: items[start:]}
    r = {key: items[start:start + size]}
    if start + size < len(items):
        r["nextCursor"] = str(start + size)
    return r


# ---- dispatch ---------------------------------------------------------------------------


def capabilities():
    caps = {"tools": {"listChanged": True}, "logging": {}}
    if OPTS.get("resources"):
        caps["resources"] = {"subscribe": True, "listChanged": True}
    if OPTS.get("prompts"):
        caps["prompts"] = {"listChanged": False}
    return caps


SERVER_INFO = {"name": "fake-mcp", "version": "1.0.0"}


def on_request(rid, method, params):
    log("recv %s" % method)
    meta = (params or {}).get("_meta")
    if (OPTS.get("stateless") or OPTS.get("log-meta")) and meta is not None:
        log("meta %s %s" % (method, json.dumps(meta, sort_keys=True)))
    if method == "initialize":
        asked = (params or {}).get("protocolVersion")
        version = OPTS.get("protocol") or (asked if asked in KNOWN_VERSIONS else "2025-11-25")
        r = {"protocolVersion": version, "capabilities": capabilities(),
             "serverInfo": SERVER_INFO}
        if OPTS.get("instructions"):
            r["instructions"] = OPTS["instructions"]
        if OPTS.get("delay-init"):
            # Answered later, from a thread: the reader keeps serving (a
            # ping or a cancel) meanwhile.
            threading.Timer(int(OPTS["delay-init"]) / 1000.0, result, (rid, r)).start()
            return None
        return result(rid, r)
    if method == "server/discover":
        if OPTS.get("discover-hang"):
            return None
        if not OPTS.get("stateless"):
            return error(rid, -32601, "Method not found: server/discover")
        r = {"resultType": "complete", "supportedVersions": ["2026-07-28", "2025-11-25"],
             "capabilities": capabilities(),
             "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
        if OPTS.get("instructions"):
            r["instructions"] = OPTS["instructions"]
        return result(rid, r)
    if method == "ping":
        return result(rid, {})
    if method == "tools/list":
        return result(rid, page(tool_list(), params, "tools"))
    if method == "tools/call":
        threading.Thread(target=run_call, args=(rid, params or {}), daemon=True).start()
        return None
    if OPTS.get("resources"):
        if method == "resources/list":
            return result(rid, page(RESOURCES, params, "resources"))
        if method == "resources/templates/list":
            return result(rid, {"resourceTemplates": TEMPLATES})
        if method == "resources/read":
            r = read_resource((params or {}).get("uri", ""))
            if r is None:
                return error(rid, -32002, "Resource not found")
            return result(rid, r)
        if method in ("resources/subscribe", "resources/unsubscribe"):
            if method == "resources/subscribe":
                uri = (params or {}).get("uri")
                send({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                      "params": {"uri": uri}})
            return result(rid, {})
    if OPTS.get("prompts"):
        if method == "prompts/list":
            return result(rid, {"prompts": [{
                "name": "greet", "description": "Greets someone.",
                "arguments": [{"name": "name", "description": "Who", "required": True}]}]})
        if method == "prompts/get":
            name = ((params or {}).get("arguments") or {}).get("name", "world")
            return result(rid, {"description": "A greeting", "messages": [
                {"role": "user", "content": {"type": "text", "text": "Say hello to %s." % name}}]})
    if method == "logging/setLevel":
        return result(rid, {})
    return error(rid, -32601, "Method not found: %s" % method)


def on_notification(method, params):
    log("recv %s" % method)
    if method == "notifications/cancelled":
        rid = (params or {}).get("requestId")
        with STATE_LOCK:
            CANCELLED.add(rid)


def on_response(msg):
    with WAIT_LOCK:
        slot = WAITING.get(msg.get("id"))
    if slot:
        slot[1] = msg
        slot[0].set()


def main():
    if OPTS.get("pid-file"):
        with open(OPTS["pid-file"], "w") as f:
            f.write("%d\n" % os.getpid())
    if OPTS.get("ignore-term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.stderr.write("fake_server: started (pid %d)\n" % os.getpid())
    sys.stderr.flush()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            error(None, -32700, "Parse error")
            continue
        if "method" in msg and "id" in msg:
            on_request(msg["id"], msg["method"], msg.get("params"))
        elif "method" in msg:
            on_notification(msg["method"], msg.get("params"))
        else:
            on_response(msg)
    log("eof")
    if OPTS.get("ignore-eof"):
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
