// stamp_model.mjs — a minimal Anthropic Messages streaming endpoint for the
// load bench: every text delta is the wall-clock time it was written,
// "[t=<ms since epoch, µs precision>]", so the bench's SSE client measures
// emit→receipt latency exactly (mockllm has no clock template; the bench's
// mockllm mode estimates emit times from its request log instead).
// Usage: node stamp_model.mjs PORT_FILE DELTAS DRIP_MS
// Threading: Node's one event loop; every stream is a timer chain.
import http from 'node:http';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

const [portFile, deltasText, dripText] = process.argv.slice(2);
const DELTAS = Number(deltasText || 50);
const DRIP = Number(dripText || 100);
const now = () => (performance.timeOrigin + performance.now()).toFixed(3);
let n = 0;
const sse = (res, type, obj) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...obj })}\n\n`);

http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body = {};
    try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* answered anyway */ }
    const id = ++n;
    if (!body.stream || !Array.isArray(body.tools) || body.tools.length === 0) {
      // Side requests (titles, summaries): a short plain answer.
      const msg = { id: `msg_${id}`, type: 'message', role: 'assistant', model: body.model || 'm',
        content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 } };
      if (!body.stream) { res.writeHead(200, { 'content-type': 'application/json' }); return res.end(JSON.stringify(msg)); }
    }
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    sse(res, 'message_start', { message: { id: `msg_${id}`, type: 'message', role: 'assistant', model: body.model || 'm',
      content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1 } } });
    sse(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    let i = 0;
    const tick = () => {
      if (res.destroyed) return;
      if (i++ < DELTAS) {
        sse(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: `[t=${now()}]` } });
        return setTimeout(tick, DRIP);
      }
      sse(res, 'content_block_stop', { index: 0 });
      sse(res, 'message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: DELTAS * 6 } });
      sse(res, 'message_stop', {});
      res.end();
    };
    setTimeout(tick, DRIP);
  });
}).listen(0, '127.0.0.1', function () {
  fs.writeFileSync(`${portFile}.tmp`, `${this.address().port}\n`);
  fs.renameSync(`${portFile}.tmp`, portFile);
});
