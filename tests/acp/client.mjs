// client.mjs — an ACP client on the official SDK (@agentclientprotocol/sdk)
// that drives `loom acp` over the child's stdio (tests/e2e/acp_sdk_client.sh):
// initialize → session/new → a prompt whose scripted model streams text,
// reads a file and edits it (the edit needs permission, which this client
// grants) → the diff arrives → end_turn; a second session's prompt cancelled
// mid-stream → cancelled; session/list, set_mode, set_config_option; then
// session/load of the first session replays it. Prints TAP-style lines
// ("ok - …" / "not ok - …"); exit status 1 when any check failed.
//
// usage: node client.mjs LOOM_ACP_BIN CWD FILE FAKE_MCP_SERVER
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

const [bin, cwd, file, fakeMcp] = process.argv.slice(2);
let failed = 0;
function check(what, cond, detail) {
  if (cond) console.log(`ok - ${what}`);
  else {
    failed++;
    console.log(`not ok - ${what}${detail !== undefined ? ": " + JSON.stringify(detail).slice(0, 1500) : ""}`);
  }
}

const child = spawn(bin, [], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const updates = [];
const permissions = [];
const waiters = [];
const app = acp
  .client({ name: "loom-acp-e2e" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params);
    for (const w of waiters.splice(0)) w(params);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params, agent }) => {
    permissions.push(params);
    if (params.sessionId === cancelOnAsk) {
      // The person presses stop while the question is open: the client
      // cancels the turn and answers the open request "cancelled".
      await agent.notify(acp.methods.agent.session.cancel, { sessionId: params.sessionId });
      return { outcome: { outcome: "cancelled" } };
    }
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  });
let cancelOnAsk = null;
const elicitations = [];
app.onRequest(acp.methods.client.elicitation.create, async ({ params }) => {
  elicitations.push(params);
  const q = Object.keys(params.requestedSchema?.properties ?? {})[0];
  return { action: "accept", content: { [q]: "Blue" } };
});
const conn = app.connect(stream);
const agent = conn.agent;
const of = (sid, kind) => updates.filter((u) => u.sessionId === sid && u.update.sessionUpdate === kind);

// ---- initialize ----------------------------------------------------------------
const init = await agent.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } },
  clientInfo: { name: "loom-acp-e2e", version: "1.0.0" },
});
check("initialize answers protocol version 1", init.protocolVersion === 1, init);
check("initialize offers loadSession", init.agentCapabilities?.loadSession === true, init);
check("initialize offers embedded context and images",
  init.agentCapabilities?.promptCapabilities?.embeddedContext === true &&
  init.agentCapabilities?.promptCapabilities?.image === true, init);
check("initialize offers MCP over http and sse",
  init.agentCapabilities?.mcpCapabilities?.http === true && init.agentCapabilities?.mcpCapabilities?.sse === true, init);
check("authenticate is a no-op", (await agent.request(acp.methods.agent.authenticate, { methodId: "none" })) !== undefined);

// ---- the first session: stream, permission, edit with its diff -----------------
const s1 = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
check("session/new gives a session id", typeof s1.sessionId === "string" && s1.sessionId.length > 0, s1);
check("session/new lists Loom's permission modes",
  s1.modes?.currentModeId === "default" && s1.modes.availableModes.some((m) => m.id === "acceptEdits") &&
  s1.modes.availableModes.some((m) => m.id === "plan"), s1.modes);
check("session/new offers the model as a config option",
  s1.configOptions?.some((o) => o.id === "model" && o.type === "select" && o.options.length > 0), s1.configOptions);

const r1 = await agent.request(acp.methods.agent.session.prompt, {
  sessionId: s1.sessionId,
  prompt: [{ type: "text", text: `EDIT-FILE ${file}` }],
});
check("the prompt ends with end_turn", r1.stopReason === "end_turn", r1);
const text = of(s1.sessionId, "agent_message_chunk").map((u) => u.update.content.text).join("");
check("the model's text streamed as agent_message_chunk", text.includes("I will read the file") && text.includes("The file now says goodbye."), text);
check("more than one chunk was streamed", of(s1.sessionId, "agent_message_chunk").length > 3);
const calls = of(s1.sessionId, "tool_call");
const read = calls.find((c) => c.update.kind === "read");
const edit = calls.find((c) => c.update.kind === "edit");
check("the Read call arrives as tool_call kind read with its location",
  read && read.update.locations?.[0]?.path === file && read.update.title.startsWith("Read"), calls);
check("the Edit call arrives as tool_call kind edit, its rawInput the tool input",
  edit && edit.update.rawInput?.old_string === "hello" && edit.update.status === "pending", calls);
check("one permission request, for the Edit call", permissions.length === 1 &&
  permissions[0].toolCall.toolCallId === edit?.update.toolCallId, permissions);
const kinds = (permissions[0]?.options ?? []).map((o) => o.kind).sort().join(",");
check("the permission options are allow/reject once/always", kinds === "allow_always,allow_once,reject_always,reject_once", kinds);
check("the permission request shows the edit's diff",
  permissions[0]?.toolCall.content?.some((c) => c.type === "diff" && c.oldText === "hello" && c.newText === "goodbye"), permissions[0]);
const done = of(s1.sessionId, "tool_call_update").filter((u) => u.update.toolCallId === edit?.update.toolCallId && u.update.status === "completed");
const diff = done[0]?.update.content?.find((c) => c.type === "diff");
check("the edit completed with its diff (the whole file before and after)",
  diff && diff.path === file && diff.oldText === "hello world\n" && diff.newText === "goodbye world\n", done);
check("the file was edited on disk", readFileSync(file, "utf8") === "goodbye world\n");
check("a usage_update reports the context window",
  of(s1.sessionId, "usage_update").some((u) => u.update.size > 0 && u.update.used > 0), of(s1.sessionId, "usage_update"));
check("available_commands_update was sent", of(s1.sessionId, "available_commands_update").length >= 1);

// ---- a second session, its prompt cancelled mid-stream ------------------------------
const s2 = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
const firstChunk = new Promise((resolve) => {
  const w = (u) => (u.sessionId === s2.sessionId && u.update.sessionUpdate === "agent_message_chunk" ? resolve() : waiters.push(w));
  waiters.push(w);
});
const p2 = agent.request(acp.methods.agent.session.prompt, {
  sessionId: s2.sessionId,
  prompt: [{ type: "text", text: "SLOW-STREAM go" }],
});
await firstChunk;
await agent.notify(acp.methods.agent.session.cancel, { sessionId: s2.sessionId });
const r2 = await p2;
check("a prompt cancelled mid-stream ends with cancelled", r2.stopReason === "cancelled", r2);
const slow = of(s2.sessionId, "agent_message_chunk").map((u) => u.update.content.text).join("");
check("the cancelled stream was cut short", slow.length > 0 && !slow.includes("THE-END"), slow);

// ---- the content blocks: an image, a file link, an embedded resource ----------------
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const r5 = await agent.request(acp.methods.agent.session.prompt, {
  sessionId: s2.sessionId,
  prompt: [
    { type: "text", text: "IMAGE-PROMPT: look at these" },
    { type: "image", data: png, mimeType: "image/png" },
    { type: "resource_link", name: "notes.txt", uri: `file://${file}` },
    { type: "resource", resource: { uri: "file:///virtual/buffer.txt", text: "EMBEDDED-TEXT unsaved" } },
  ],
});
check("a prompt of image, link and embedded resource ends with end_turn", r5.stopReason === "end_turn", r5);

// ---- the model asks a question: an elicitation form ------------------------------------
const s4 = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
const r6 = await agent.request(acp.methods.agent.session.prompt, {
  sessionId: s4.sessionId, prompt: [{ type: "text", text: "ASK-QUESTION please" }] });
check("a prompt with a question ends with end_turn", r6.stopReason === "end_turn", r6);
const form = elicitations[0]?.requestedSchema?.properties?.["Which color?"];
check("AskUserQuestion arrives as an elicitation form, one choice per question",
  elicitations.length === 1 && elicitations[0].sessionId === s4.sessionId && elicitations[0].mode === "form" &&
  form?.type === "string" && form.oneOf.map((o) => o.const).join() === "Red,Blue", elicitations);
const asked = of(s4.sessionId, "tool_call_update").find((u) => u.update.status === "completed");
check("the answer reaches the model as the tool's result",
  JSON.stringify(asked?.update.content ?? []).includes("Blue"), of(s4.sessionId, "tool_call_update"));

// ---- an MCP server passed by the client: its tool's elicitation, its prompt -----------
const s5 = await agent.request(acp.methods.agent.session.new, {
  cwd,
  mcpServers: [{ name: "fake", command: "python3", args: [fakeMcp, "--prompts", "--elicit"], env: [{ name: "FAKE_MCP_INSTRUCTIONS", value: "be kind" }] }],
});
const nElicit = elicitations.length;
const r7 = await agent.request(acp.methods.agent.session.prompt, {
  sessionId: s5.sessionId, prompt: [{ type: "text", text: "MCP-ELICIT go" }] });
check("a prompt calling the client's MCP server ends with end_turn", r7.stopReason === "end_turn", r7);
const mcpCall = of(s5.sessionId, "tool_call").find((c) => c.update.title.startsWith("mcp__fake__ask"));
check("the MCP tool call arrives as a tool_call", mcpCall !== undefined, of(s5.sessionId, "tool_call"));
const el = elicitations[nElicit];
check("the MCP server's elicitation reaches the client as elicitation/create",
  el?.sessionId === s5.sessionId && el?.mode === "form" && el?._meta?.loom?.mcpServer === "fake" &&
  el?.requestedSchema?.properties?.name?.type === "string", elicitations.slice(nElicit));
const mcpDone = of(s5.sessionId, "tool_call_update").find((u) => u.update.toolCallId === mcpCall?.update.toolCallId && u.update.status === "completed");
check("the client's answer went back to the MCP server",
  JSON.stringify(mcpDone?.update.content ?? []).includes("Blue"), mcpDone);
check("the MCP server's prompt is offered as a command",
  of(s5.sessionId, "available_commands_update").some((u) => u.update.availableCommands.some((c) => c.name === "mcp__fake__greet")),
  of(s5.sessionId, "available_commands_update"));

const r8 = await agent.request(acp.methods.agent.session.prompt, {
  sessionId: s5.sessionId, prompt: [{ type: "text", text: "/mcp__fake__greet Ada" }] });
const greeted = of(s5.sessionId, "agent_message_chunk").map((u) => u.update.content.text).join("");
check("a /command prompt runs the MCP server's prompt", r8.stopReason === "end_turn" && greeted.includes("Hello, Ada."), greeted);

// ---- a third session: cancelled while its permission request is open -----------------
const s3 = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
cancelOnAsk = s3.sessionId;
const before = permissions.length;
const r4 = await agent.request(acp.methods.agent.session.prompt, {
  sessionId: s3.sessionId,
  prompt: [{ type: "text", text: "ASK-BASH now" }],
});
check("a Bash call asked for permission", permissions.length === before + 1 &&
  permissions[before].toolCall.kind === "execute", permissions.slice(before));
check("cancelled while the permission request was open: cancelled", r4.stopReason === "cancelled", r4);
check("the refused command did not run", !existsSync(`${cwd}/asked.txt`));
const bash = of(s3.sessionId, "tool_call_update").filter((u) => u.update.status === "failed");
check("the Bash call ends failed", bash.length === 1, of(s3.sessionId, "tool_call_update"));

// ---- list, mode, model ---------------------------------------------------------------
const list = await agent.request(acp.methods.agent.session.list, { cwd });
check("session/list lists the first session", list.sessions.some((s) => s.sessionId === s1.sessionId && s.cwd === cwd), list);
await agent.request(acp.methods.agent.session.setMode, { sessionId: s1.sessionId, modeId: "acceptEdits" });
check("session/set_mode is echoed as current_mode_update",
  of(s1.sessionId, "current_mode_update").some((u) => u.update.currentModeId === "acceptEdits"));
const cfg = await agent.request(acp.methods.agent.session.setConfigOption, { sessionId: s1.sessionId, configId: "model", value: "haiku" });
check("session/set_config_option switches the model",
  cfg.configOptions.some((o) => o.id === "model" && o.currentValue === "haiku"), cfg);
let badMode = null;
try {
  await agent.request(acp.methods.agent.session.setMode, { sessionId: s1.sessionId, modeId: "yolo" });
} catch (e) { badMode = e; }
check("an unknown mode is an invalid-params error", badMode?.code === -32602, badMode);

// ---- session/load of the first session replays it ------------------------------------
const exited1 = new Promise((r) => child.on("exit", r));
child.stdin.end();
await exited1;
check("the first loom acp exits 0 when its stdin closes", child.exitCode === 0, child.exitCode);
conn.close();
const child2 = spawn(bin, [], { stdio: ["pipe", "pipe", "inherit"] });
updates.length = 0;
const conn2 = app.connect(acp.ndJsonStream(Writable.toWeb(child2.stdin), Readable.toWeb(child2.stdout)));
await conn2.agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
const loaded = await conn2.agent.request(acp.methods.agent.session.load, { sessionId: s1.sessionId, cwd, mcpServers: [] });
check("session/load answers with the modes", loaded.modes?.currentModeId !== undefined, loaded);
const user = of(s1.sessionId, "user_message_chunk").map((u) => u.update.content.text).join("");
check("the replay holds the user's prompt", user.includes("EDIT-FILE"), updates);
const replayText = of(s1.sessionId, "agent_message_chunk").map((u) => u.update.content.text).join("");
check("the replay holds the agent's replies", replayText.includes("I will read the file") && replayText.includes("goodbye"), replayText);
const replayCalls = of(s1.sessionId, "tool_call");
check("the replay holds the tool calls", replayCalls.some((c) => c.update.kind === "read") && replayCalls.some((c) => c.update.kind === "edit"), replayCalls);
check("the replay holds the tool results", of(s1.sessionId, "tool_call_update").some((u) => u.update.status === "completed"));
const r3 = await conn2.agent.request(acp.methods.agent.session.prompt, {
  sessionId: s1.sessionId, prompt: [{ type: "text", text: "AFTER-LOAD and once more" }] });
check("a loaded session takes a new prompt", r3.stopReason === "end_turn", r3);
conn2.close();
child2.stdin.end();
await new Promise((r) => child2.on("exit", r));
check("the second loom acp exits 0 when its stdin closes", child2.exitCode === 0, child2.exitCode);
process.exit(failed ? 1 : 0);
