// client_fs.mjs — an ACP client on the official SDK (@agentclientprotocol/sdk)
// that holds the files and the terminal (tests/e2e/acp_client_fs.sh). It
// offers fs.readTextFile, fs.writeTextFile and terminal; it keeps an unsaved
// buffer for FILE whose text differs from the disk, and runs terminal
// commands for real (child_process). Against the scripted model
// (tests/scenarios/acp_client_fs.json):
//   FS-EDIT   the Read sees the buffer, the Edit writes the edited buffer
//             back (the disk untouched), the Bash runs in the client's
//             terminal, embedded in the call, released after its exit;
//   DENIED-BASH  a command a deny rule refuses never reaches terminal/create;
//   SLOW-TERM    a command cancelled while it runs is killed and released;
// then a second process whose client offers neither: the Read sees the disk
// and the Bash runs in Loom. Prints TAP-style lines; exit 1 on a failure.
//
// usage: node client_fs.mjs LOOM_ACP_BIN CWD FILE
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

const [bin, cwd, file] = process.argv.slice(2);
let failed = 0;
function check(what, cond, detail) {
  if (cond) console.log(`ok - ${what}`);
  else {
    failed++;
    console.log(`not ok - ${what}${detail !== undefined ? ": " + JSON.stringify(detail).slice(0, 1500) : ""}`);
  }
}

const BUFFER = "hello from the unsaved buffer\nBUFFER-ONLY line\n";
const DISK = readFileSync(file, "utf8");

// ---- one connection: a loom-acp process and a client ---------------------------
function connect(caps) {
  const child = spawn(bin, [], { stdio: ["pipe", "pipe", "inherit"] });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const c = { child, updates: [], log: [], buffers: new Map(), terms: new Map(), waiters: [] };
  let next = 1;
  const app = acp
    .client({ name: "loom-acp-fs-e2e" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      c.updates.push(params);
      for (const w of c.waiters.splice(0)) w(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      c.log.push({ method: "session/request_permission", params });
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
      c.log.push({ method: "fs/read_text_file", params });
      if (c.buffers.has(params.path)) return { content: c.buffers.get(params.path) };
      try {
        return { content: readFileSync(params.path, "utf8") };
      } catch {
        throw acp.RequestError.resourceNotFound(params.path);
      }
    })
    .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
      c.log.push({ method: "fs/write_text_file", params });
      c.buffers.set(params.path, params.content); // the editor's buffer, not saved
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, async ({ params }) => {
      c.log.push({ method: "terminal/create", params });
      const id = `term-${next++}`;
      const proc = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? cwd });
      const t = { proc, output: "", exit: null, released: false };
      const onData = (d) => (t.output += d.toString("utf8"));
      proc.stdout.on("data", onData);
      proc.stderr.on("data", onData);
      t.done = new Promise((resolve) => proc.on("close", (code, signal) => {
        t.exit = { exitCode: code, signal };
        resolve(t.exit);
      }));
      c.terms.set(id, t);
      return { terminalId: id };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
      c.log.push({ method: "terminal/wait_for_exit", params });
      return await c.terms.get(params.terminalId).done;
    })
    .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
      c.log.push({ method: "terminal/output", params });
      const t = c.terms.get(params.terminalId);
      if (t.exit === null) await Promise.race([t.done, new Promise((r) => setTimeout(r, 2000))]);
      return { output: t.output, truncated: false, exitStatus: t.exit };
    })
    .onRequest(acp.methods.client.terminal.kill, async ({ params }) => {
      c.log.push({ method: "terminal/kill", params });
      c.terms.get(params.terminalId).proc.kill("SIGKILL");
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, async ({ params }) => {
      c.log.push({ method: "terminal/release", params });
      const t = c.terms.get(params.terminalId);
      t.released = true;
      if (t.exit === null) t.proc.kill("SIGKILL");
      return {};
    });
  c.agent = app.connect(stream).agent;
  c.caps = caps;
  c.of = (sid, kind) => c.updates.filter((u) => u.sessionId === sid && u.update.sessionUpdate === kind);
  c.calls = (method) => c.log.filter((e) => e.method === method);
  return c;
}

async function start(c) {
  await c.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: c.caps,
    clientInfo: { name: "loom-acp-fs-e2e", version: "1.0.0" },
  });
}

async function prompt(c, text) {
  const s = await c.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  const r = await c.agent.request(acp.methods.agent.session.prompt, {
    sessionId: s.sessionId,
    prompt: [{ type: "text", text }],
  });
  return { sid: s.sessionId, r };
}

const updatesOf = (c, sid, callId) =>
  c.of(sid, "tool_call_update").filter((u) => u.update.toolCallId === callId);
const textOf = (u) => (u?.update.content ?? []).filter((x) => x.type === "content").map((x) => x.content.text).join("");

// ---- A: a client that holds the files and the terminal -----------------------------
const a = connect({ fs: { readTextFile: true, writeTextFile: true }, terminal: true });
await start(a);
a.buffers.set(file, BUFFER);

const fsEdit = await prompt(a, `FS-EDIT ${file}`);
check("the FS-EDIT prompt ends with end_turn", fsEdit.r.stopReason === "end_turn", fsEdit.r);
const reads = a.calls("fs/read_text_file");
check("Read asked the client for the file", reads.some((e) => e.params.path === file && e.params.sessionId === fsEdit.sid), reads);
const readDone = updatesOf(a, fsEdit.sid, "toolu_fs_read").find((u) => u.update.status === "completed");
check("the Read shows the unsaved buffer, not the disk",
  textOf(readDone).includes("BUFFER-ONLY line") && !textOf(readDone).includes(DISK.trim()), readDone);
const writes = a.calls("fs/write_text_file");
check("the Edit wrote the edited buffer through the client",
  writes.length === 1 && writes[0].params.path === file &&
  writes[0].params.content === BUFFER.replace("hello", "goodbye"), writes);
check("the disk file is untouched", readFileSync(file, "utf8") === DISK);
const editDone = updatesOf(a, fsEdit.sid, "toolu_fs_edit").find((u) => u.update.status === "completed");
const diff = editDone?.update.content?.find((x) => x.type === "diff");
check("the Edit's diff is of the buffer's texts",
  diff && diff.path === file && diff.oldText === BUFFER && diff.newText === BUFFER.replace("hello", "goodbye"), editDone);
const creates = a.calls("terminal/create");
check("the Bash command went to terminal/create (bash -c, the session's cwd)",
  creates.length === 1 && creates[0].params.command === "bash" && creates[0].params.args?.[0] === "-c" &&
  creates[0].params.args?.[1] === "echo from-terminal; echo on-stderr >&2; exit 3" &&
  creates[0].params.cwd === cwd && creates[0].params.outputByteLimit > 0, creates);
const bashUpdates = updatesOf(a, fsEdit.sid, "toolu_fs_bash");
const embedAt = bashUpdates.findIndex((u) => u.update.content?.some((x) => x.type === "terminal" && x.terminalId === "term-1"));
check("the Bash tool_call_update embeds the terminal", embedAt >= 0, bashUpdates);
const order = a.log.map((e) => e.method).filter((m) => m.startsWith("terminal/"));
check("the terminal was waited for, read and released, in that order",
  JSON.stringify(order) === JSON.stringify(["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]), order);
check("the terminal was released", a.terms.get("term-1")?.released === true);
const bashDone = bashUpdates.find((u) => u.update.status === "failed" || u.update.status === "completed");
check("the Bash call finished failed (exit 3) and still shows its terminal",
  bashDone?.update.status === "failed" && bashDone.update.content?.some((x) => x.type === "terminal" && x.terminalId === "term-1"), bashDone);
check("the Bash call's raw output says the client ran it, with exit code 3",
  bashDone?.update.rawOutput?.ranBy === "driver" && bashDone.update.rawOutput.exitCode === 3, bashDone?.update.rawOutput);
check("permission was asked for the Edit and the Bash call",
  a.calls("session/request_permission").length === 2, a.calls("session/request_permission"));

const denied = await prompt(a, "DENIED-BASH please");
check("the DENIED-BASH prompt ends with end_turn", denied.r.stopReason === "end_turn", denied.r);
check("a command Loom's rules deny never reaches terminal/create", a.calls("terminal/create").length === 1, a.calls("terminal/create"));
const deniedDone = updatesOf(a, denied.sid, "toolu_denied").find((u) => u.update.status === "failed");
check("the denied call is failed with the rule's denial", deniedDone && /deny|denied/i.test(textOf(deniedDone)), updatesOf(a, denied.sid, "toolu_denied"));

// A command cancelled while the client's terminal runs it: killed, released.
const slowSession = await a.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
const embedded = new Promise((resolve) => {
  const w = (u) => (u.sessionId === slowSession.sessionId && u.update.content?.some?.((x) => x.type === "terminal") ? resolve() : a.waiters.push(w));
  a.waiters.push(w);
});
const slow = a.agent.request(acp.methods.agent.session.prompt, { sessionId: slowSession.sessionId, prompt: [{ type: "text", text: "SLOW-TERM now" }] });
await embedded;
await a.agent.notify(acp.methods.agent.session.cancel, { sessionId: slowSession.sessionId });
const slowR = await slow;
check("a prompt cancelled while the client's terminal runs ends cancelled", slowR.stopReason === "cancelled", slowR);
const slowTerm = a.terms.get("term-2");
check("the cancelled command's terminal was killed", a.calls("terminal/kill").some((e) => e.params.terminalId === "term-2"), a.calls("terminal/kill"));
check("the cancelled command's terminal was released", slowTerm?.released === true);
a.child.stdin.end();

// ---- B: a client that offers neither: Loom's own files and commands ----------------
const b = connect({ fs: { readTextFile: false, writeTextFile: false }, terminal: false });
await start(b);
b.buffers.set(file, BUFFER);
const local = await prompt(b, `LOCAL-READ ${file}`);
check("the LOCAL-READ prompt ends with end_turn", local.r.stopReason === "end_turn", local.r);
check("without the capabilities no fs or terminal request is sent",
  b.log.every((e) => e.method === "session/request_permission"), b.log.map((e) => e.method));
const localRead = updatesOf(b, local.sid, "toolu_local_read").find((u) => u.update.status === "completed");
check("the Read shows the disk", textOf(localRead).includes(DISK.trim()) && !textOf(localRead).includes("BUFFER-ONLY"), localRead);
const localBash = updatesOf(b, local.sid, "toolu_local_bash").find((u) => u.update.status === "completed");
check("the Bash ran in Loom, its output the call's text", textOf(localBash).includes("local-run") &&
  !localBash.update.content.some((x) => x.type === "terminal"), localBash);
b.child.stdin.end();

await Promise.all([a, b].map((c) => new Promise((r) => (c.child.exitCode !== null ? r() : c.child.on("exit", r)))));
check("both loom acp processes exited 0", a.child.exitCode === 0 && b.child.exitCode === 0, [a.child.exitCode, b.child.exitCode]);
process.exit(failed ? 1 : 0);
