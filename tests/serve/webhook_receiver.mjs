// webhook_receiver.mjs — a loopback webhook receiver for serve_webhooks.sh.
// Usage: node webhook_receiver.mjs PORT_FILE LOG_FILE SECRET FAIL_FIRST
// Listens on 127.0.0.1:0 (the port to PORT_FILE, atomically), verifies
// every POST's Standard Webhooks signature twice — with the npm package
// standardwebhooks (tests/validate/node_modules) and by hand (HMAC-SHA256
// over "id.timestamp.body", key = base64 of the secret after "whsec_") —
// and appends one JSON line per attempt to LOG_FILE: {t, id, timestamp,
// type, verified_pkg, verified_hmac, answered, body}. The first message id
// it sees is answered 500 FAIL_FIRST times before 200, so the sender's
// retries show.
// Threading: Node's one event loop; ends on SIGTERM.
import http from 'node:http';
import fs from 'node:fs';
import crypto from 'node:crypto';
import path from 'node:path';
import { createRequire } from 'node:module';

const [portFile, logFile, secret, failFirstText] = process.argv.slice(2);
const failFirst = Number(failFirstText || 0);
const SRC = process.env.LOOM_SRC || path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(import.meta.url);
let Webhook = null;
try {
  Webhook = require(require.resolve('standardwebhooks', { paths: [path.join(SRC, 'tests/validate')] })).Webhook;
} catch { Webhook = null; }

let firstId = null;
let firstAttempts = 0;
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const id = req.headers['webhook-id'];
    const ts = req.headers['webhook-timestamp'];
    const sig = req.headers['webhook-signature'] || '';
    let verifiedPkg = null;
    if (Webhook) {
      try { new Webhook(secret).verify(body, { 'webhook-id': id, 'webhook-timestamp': ts, 'webhook-signature': sig }); verifiedPkg = true; }
      catch { verifiedPkg = false; }
    }
    const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
    const want = crypto.createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
    const verifiedHmac = sig.split(' ').some((s) => s === `v1,${want}`);
    let answered = 200;
    if (firstId === null) firstId = id;
    if (id === firstId && firstAttempts++ < failFirst) answered = 500;
    let parsed = null;
    try { parsed = JSON.parse(body); } catch { parsed = null; }
    fs.appendFileSync(logFile, JSON.stringify({ t: Date.now(), id, timestamp: ts, type: parsed && parsed.type,
      content_type: req.headers['content-type'], verified_pkg: verifiedPkg, verified_hmac: verifiedHmac,
      answered, path: req.url, body: parsed }) + '\n');
    res.writeHead(answered, { 'content-type': 'text/plain' });
    res.end(answered === 200 ? 'ok' : 'try again');
  });
});
server.listen(0, '127.0.0.1', () => {
  const tmp = `${portFile}.tmp`;
  fs.writeFileSync(tmp, `${server.address().port}\n`);
  fs.renameSync(tmp, portFile);
});
process.on('SIGTERM', () => { server.close(); process.exit(0); });
