// client.mjs — drives `loom mcp serve` with the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk, pinned in tests/mcp/package.json):
//   node client.mjs stdio LOOM_BIN WORKDIR     (StdioClientTransport)
//   node client.mjs http URL WORKDIR           (StreamableHTTPClientTransport)
// WORKDIR holds notes.txt ("hello from notes") and a folder x; the server
// runs there in the default permission mode against mockllm scripted by
// tests/scenarios/mcp_serve_agent.json. Prints "ok - …" / "not ok - …"
// lines and exits 1 when any check failed.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const nm = process.env.MCP_NODE_MODULES || path.join(here, '../mcp/node_modules');
const sdk = (p) => import(pathToFileURL(path.join(nm, '@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');

const [mode, target, workdir] = process.argv.slice(2);
let failed = 0;
const ok = (cond, what, extra) => {
  if (cond) console.log(`ok - ${mode}: ${what}`);
  else { failed++; console.log(`not ok - ${mode}: ${what}${extra ? ` (${extra})` : ''}`); }
};

let transport;
let stderrText = '';
if (mode === 'stdio') {
  const { StdioClientTransport } = await sdk('client/stdio.js');
  transport = new StdioClientTransport({
    command: target, args: ['mcp', 'serve'], cwd: workdir, env: process.env, stderr: 'pipe',
  });
  transport.stderr.on('data', (d) => { stderrText += d.toString(); });
} else {
  const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
  transport = new StreamableHTTPClientTransport(new URL(target));
}
const client = new Client({ name: 'loom-e2e', version: '1.0.0' });
await client.connect(transport);
// Every message the server sent, in arrival order. The SDK hands
// notifications to their handlers a microtask later but settles a response at
// once, dropping the request's progress handler: progress that arrives in the
// same read as the result is never reported to onprogress. What the server
// sent, and in which order, is checked here on the wire instead.
const wire = [];
const sdkOnMessage = transport.onmessage;
transport.onmessage = (msg, extra) => { wire.push(msg); sdkOnMessage(msg, extra); };
ok(client.getServerVersion()?.name === 'loom', 'initialize: serverInfo.name is loom');
ok(/agent tool/.test(client.getInstructions() || ''), 'initialize: instructions are given');
if (mode === 'http') ok(!!transport.sessionId, 'the server gave an Mcp-Session-Id');

// tools/list, every page.
let tools = [];
let cursor;
let pages = 0;
do {
  const r = await client.listTools(cursor ? { cursor } : undefined);
  tools = tools.concat(r.tools);
  cursor = r.nextCursor;
  pages++;
} while (cursor && pages < 50);
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
ok(byName.Read && byName.Bash && byName.Write && byName.agent, 'tools/list has Read, Write, Bash and agent',
  tools.map((t) => t.name).join(','));
if (process.env.LOOM_MCP_PAGE_SIZE) ok(pages > 1, `tools/list came in ${pages} pages (cursor followed)`);
ok(byName.Read?.annotations?.readOnlyHint === true, 'Read is annotated readOnlyHint');
ok(byName.Bash?.annotations?.readOnlyHint === false && byName.Bash?.annotations?.destructiveHint === true,
  'Bash is annotated destructive');
ok(byName.WebFetch?.annotations?.openWorldHint === true, 'WebFetch is annotated openWorldHint');
ok(byName.Read?.inputSchema?.type === 'object' && byName.Read.inputSchema.properties?.file_path,
  'Read has its input schema');
ok(!byName.AskUserQuestion, 'AskUserQuestion (needs a person) is not offered');

// A built-in call through the pipeline.
const read = await client.callTool({ name: 'Read', arguments: { file_path: 'notes.txt' } });
ok(!read.isError && /hello from notes/.test(read.content?.[0]?.text || ''), 'Read of notes.txt returns its text',
  JSON.stringify(read).slice(0, 300));

// A call the default mode would ask about: denied, headless.
const rm = await client.callTool({ name: 'Bash', arguments: { command: 'rm -rf x' } });
ok(rm.isError === true && /denied/i.test(rm.content?.[0]?.text || ''), 'Bash rm -rf x is an isError result saying denied',
  JSON.stringify(rm).slice(0, 300));
ok(fs.existsSync(path.join(workdir, 'x')), 'x is still there');

// Bad input for a tool: a tool error result, not a protocol error.
const bad = await client.callTool({ name: 'Read', arguments: { file_path: 7 } });
ok(bad.isError === true, 'Read with a number for file_path is an isError result');

// Unknown tool: a protocol error.
let unknownErr;
try { await client.callTool({ name: 'NoSuchTool', arguments: {} }); } catch (e) { unknownErr = e; }
ok(unknownErr && /NoSuchTool/.test(String(unknownErr.message)), 'an unknown tool is a JSON-RPC error',
  String(unknownErr));

// The agent tool: a whole run, with progress.
const agent = await client.callTool({ name: 'agent', arguments: { prompt: 'What do the notes say?' } },
  undefined, { onprogress: () => {}, timeout: 60000 });
ok(!agent.isError && /The notes say hello/.test(agent.content?.[0]?.text || ''), 'agent returns the final text',
  JSON.stringify(agent).slice(0, 300));
ok(agent.structuredContent?.result === 'The notes say hello.' && agent.structuredContent?.stop_reason === 'end_turn'
  && typeof agent.structuredContent?.usage === 'object', 'agent structuredContent has result, stop_reason, usage',
  JSON.stringify(agent.structuredContent));
const answerAt = wire.findIndex((m) => m.result?.structuredContent?.result === 'The notes say hello.');
const agentId = answerAt >= 0 ? wire[answerAt].id : undefined;
const progressAt = wire.map((m, i) => [m, i])
  .filter(([m]) => m.method === 'notifications/progress' && m.params?.progressToken === agentId);
const progress = progressAt.map(([m]) => m.params);
ok(progress.some((p) => /tool Read/.test(p.message || '')) && progress.length >= 3,
  `agent sent progress per tool start and model reply (${progress.length})`,
  JSON.stringify(progress));
ok(progressAt.every(([, i]) => i < answerAt), 'every progress notification came before the result');
ok(progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress), 'progress increases');

// The agent tool cancelled mid-run: the model stalls after a Glob call.
const ac = new AbortController();
const t0 = Date.now();
let abortErr;
let aborted = 0;
try {
  await client.callTool({ name: 'agent', arguments: { prompt: 'List the text files, slowly.' } }, undefined, {
    signal: ac.signal, timeout: 60000,
    onprogress: (p) => { if (/tool Glob/.test(p.message || '') && !aborted) { aborted = Date.now(); setTimeout(() => ac.abort('enough'), 300); } },
  });
} catch (e) { abortErr = e; }
ok(abortErr && aborted, 'the cancelled agent call rejects on the client after its Glob progress', String(abortErr));
ok(Date.now() - t0 < 20000, 'cancelled well before the model stall ends');
// The server is still fine.
const ping = await client.ping();
ok(ping && Object.keys(ping).length === 0, 'ping after the cancel answers {}');
if (mode === 'stdio') {
  for (let i = 0; i < 100 && !/ended cancelled/.test(stderrText); i++) await new Promise((r) => setTimeout(r, 100));
  ok(/ended cancelled/.test(stderrText), 'the server says the run ended cancelled', stderrText.slice(-400));
}
if (mode === 'http') {
  // The session ends with DELETE.
  await transport.terminateSession();
  ok(!transport.sessionId, 'DELETE ended the session');
}
await client.close();
process.exit(failed ? 1 : 0);
