// client_fs_raw.mjs — raw JSON-RPC lines (no SDK, so the answers can be
// wrong on purpose) to `loom acp --client-timeout 1` from a client that
// offers fs and terminal, answering Loom's requests badly
// (tests/e2e/acp_client_fs.sh). One session per case; each Read or Bash
// call must finish failed with a clear message, the prompt must end, the
// process must live on:
//   read-error    fs/read_text_file answered with a JSON-RPC error
//   read-type     fs/read_text_file answered {content: 42}
//   read-silent   fs/read_text_file never answered (the deadline passes)
//   term-id       terminal/create answered {terminalId: 7}
//   term-exit     terminal/wait_for_exit answered {exitCode: "zero"}
// Prints TAP-style lines; exit 1 on a failure.
//
// usage: node client_fs_raw.mjs LOOM_ACP_BIN CWD FILE
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [bin, cwd, file] = process.argv.slice(2);
let failed = 0;
function check(what, cond, detail) {
  if (cond) console.log(`ok - ${what}`);
  else {
    failed++;
    console.log(`not ok - ${what}${detail !== undefined ? ": " + JSON.stringify(detail).slice(0, 1500) : ""}`);
  }
}

const child = spawn(bin, ["--client-timeout", "1"], { stdio: ["pipe", "pipe", "inherit"] });
const send = (m) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
const pending = new Map();
const updates = [];
const asked = [];
let mode = "";
let nextId = 1;

function request(method, params) {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve) => pending.set(id, resolve));
}

// How this client answers Loom's requests, by case.
function answer(m) {
  asked.push(m.method);
  const reply = (result) => send({ id: m.id, result });
  switch (m.method) {
    case "session/request_permission":
      return reply({ outcome: { outcome: "selected", optionId: "allow_once" } });
    case "fs/read_text_file":
      if (mode === "read-error") return send({ id: m.id, error: { code: -32603, message: "BUFFER-LOCKED by the editor" } });
      if (mode === "read-type") return reply({ content: 42 });
      return; // read-silent: never answered
    case "terminal/create":
      if (mode === "term-id") return reply({ terminalId: 7 });
      return reply({ terminalId: "raw-term" });
    case "terminal/wait_for_exit":
      return reply({ exitCode: "zero" });
    case "terminal/output":
      return reply({ output: "raw output\n", truncated: false });
    default:
      return reply({}); // kill, release
  }
}

createInterface({ input: child.stdout }).on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method && m.id !== undefined) answer(m);
  else if (m.method === "session/update") updates.push(m.params);
  else if (m.id !== undefined && pending.has(m.id)) {
    pending.get(m.id)(m);
    pending.delete(m.id);
  }
});

await request("initialize", {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
});

async function run(caseName, text, callId) {
  mode = caseName;
  const s = await request("session/new", { cwd, mcpServers: [] });
  const sid = s.result.sessionId;
  const r = await request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text }] });
  check(`${caseName}: the prompt ends with end_turn`, r.result?.stopReason === "end_turn", r);
  const done = updates.find((u) => u.sessionId === sid && u.update.sessionUpdate === "tool_call_update" &&
    u.update.toolCallId === callId && u.update.status === "failed");
  const text_ = (done?.update.content ?? []).filter((x) => x.type === "content").map((x) => x.content.text).join("");
  return { done, text: text_ };
}

let r = await run("read-error", `BAD-READ ${file}`, "toolu_bad_read");
check("read-error: the Read failed with the client's error message and code",
  r.text.includes("fs/read_text_file") && r.text.includes("-32603") && r.text.includes("BUFFER-LOCKED"), r.done);
r = await run("read-type", `BAD-READ ${file}`, "toolu_bad_read");
check("read-type: the Read failed naming the field of the malformed answer",
  r.text.includes("malformed") && r.text.includes("\"content\" is not a string"), r.done);
r = await run("read-silent", `BAD-READ ${file}`, "toolu_bad_read");
check("read-silent: the Read failed once the deadline passed",
  r.text.includes("did not answer fs/read_text_file within 1.0 s"), r.done);
r = await run("term-id", "BAD-TERM go", "toolu_bad_term");
check("term-id: the Bash failed naming terminalId",
  r.text.includes("terminal/create") && r.text.includes("terminalId"), r.done);
const releasedBefore = asked.filter((m) => m === "terminal/release").length;
r = await run("term-exit", "BAD-TERM go", "toolu_bad_term");
check("term-exit: the Bash failed naming exitCode", r.text.includes("terminal/wait_for_exit") && r.text.includes("exitCode"), r.done);
check("term-exit: the terminal was killed and released all the same",
  asked.includes("terminal/kill") && asked.filter((m) => m === "terminal/release").length === releasedBefore + 1, asked);

const alive = await request("session/list", {});
check("loom acp still answers after the malformed replies", Array.isArray(alive.result?.sessions), alive);
child.stdin.end();
await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.on("exit", resolve)));
check("loom acp exited 0", child.exitCode === 0, child.exitCode);
process.exit(failed ? 1 : 0);
