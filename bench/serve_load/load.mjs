// load.mjs — the load driver of bench/serve_load (run.sh starts the model
// and loom-serve, then this). Starts RUNS runs at once (each its own
// session), reads every run's SSE stream, and reports:
//   - latency from the model's emit of a token to this client's receipt of
//     the token.delta carrying it: exact in stamp mode (the delta text is
//     the emit time), estimated in mockllm mode (the request's time in
//     mockllm's log + the delta's index × drip_ms: mockllm sleeps drip_ms
//     before each event, so sleep overrun under load counts as latency);
//   - loom-serve's RSS: idle, at the peak while every run streams, and per
//     streaming run ((peak − idle) / RUNS);
//   - errors: non-2xx answers, broken streams, runs not completed.
// Usage: node load.mjs --url U --token T --runs N --mode stamp|mockllm
//        [--pid PID] [--mock-log FILE --drip MS] [--json OUT]
// Threading: one event loop; the streams are plain http (no schema check:
// the e2e scenarios validate, the bench measures).
import http from 'node:http';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

const arg = (k, d) => { const i = process.argv.indexOf(`--${k}`); return i > 0 ? process.argv[i + 1] : d; };
const URL_ = new URL(arg('url'));
const TOKEN = arg('token');
const RUNS = Number(arg('runs', 1000));
const MODE = arg('mode', 'stamp');
const PID = arg('pid');
const DRIP = Number(arg('drip', 100));
const now = () => performance.timeOrigin + performance.now();
const agent = new http.Agent({ keepAlive: true, maxSockets: 200 });
const errors = [];

function rss() {
  if (!PID) return null;
  try { return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${PID}/status`, 'utf8'))[1]); } catch { return null; }
}
function call(method, path, body) {
  return new Promise((resolve) => {
    const data = body ? Buffer.from(JSON.stringify(body)) : null;
    const req = http.request({ host: URL_.hostname, port: URL_.port, path, method, agent,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(data ? { 'content-length': data.length } : {}) } }, (res) => {
      const c = [];
      res.on('data', (x) => c.push(x));
      res.on('end', () => {
        const text = Buffer.concat(c).toString('utf8');
        if (res.statusCode >= 300) errors.push(`${method} ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
        let json = null; try { json = JSON.parse(text); } catch { /* */ }
        resolve({ status: res.statusCode, json });
      });
    });
    req.on('error', (e) => { errors.push(`${method} ${path}: ${e.message}`); resolve({ status: 0, json: null }); });
    if (data) req.write(data);
    req.end();
  });
}

// Streams connect as soon as their run exists; a delta emitted before the
// client's stream was open (its 200 arrived) was a backlog, not a live
// delivery, and is counted apart.
const connectedAt = new Map();
function stream(runId, onDelta) {
  return new Promise((resolve) => {
    const req = http.request({ host: URL_.hostname, port: URL_.port, path: `/runs/${runId}/stream`,
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' } }, (res) => {
      connectedAt.set(runId, now());
      if (res.statusCode !== 200) { errors.push(`stream ${runId}: ${res.statusCode}`); res.resume(); return resolve(null); }
      let buf = '';
      let end = null;
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const t = now();
        buf += chunk;
        let k;
        while ((k = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, k);
          buf = buf.slice(k + 2);
          let ev = null; let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) ev = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (ev === 'end') { try { end = JSON.parse(data); } catch { end = { state: '?' }; } }
          else if (ev === 'token.delta') { try { onDelta(JSON.parse(data), t); } catch (e) { errors.push(`delta ${runId}: ${e.message}`); } }
        }
      });
      res.on('end', () => resolve(end));
      res.on('error', (e) => { errors.push(`stream ${runId}: ${e.message}`); resolve(end); });
    });
    req.on('error', (e) => { errors.push(`stream ${runId}: ${e.message}`); resolve(null); });
    req.end();
  });
}

const pct = (a, p) => (a.length ? a[Math.min(a.length - 1, Math.floor((p / 100) * a.length))] : NaN);

const idle = rss();
const lat = [];
const firstLat = [];
const firstSeen = new Map();
let peak = idle || 0;
let streamingNow = 0;
let peakStreaming = 0;
const sampler = setInterval(() => {
  const r = rss();
  if (r && r > peak) { peak = r; peakStreaming = streamingNow; }
}, 100);

let backlog = 0;
const emits = [];
const toLoom = [];
const toClient = [];
const t0 = now();
let tCreated = 0;
const made = [];
const ends = await Promise.all(Array.from({ length: RUNS }, async (_, i) => {
  const s = await call('POST', '/sessions', { project_id: 'main' });
  if (!s.json || !s.json.session_id) return null;
  const t = await call('POST', '/tasks', { session_id: s.json.session_id, goal: `LOAD-${i}: stream`, agent_profile: 'bench' });
  if (!t.json || !t.json.task_id) return null;
  const r = await call('POST', '/runs', { task_id: t.json.task_id });
  if (!r.json || !r.json.run_id) return null;
  const run = r.json.run_id;
  made.push({ i, run });
  if (made.length === RUNS) tCreated = now();
  streamingNow++;
  const e = await stream(run, (ev, tr) => {
    const txt = ev.payload && ev.payload.text || '';
    if (!firstSeen.has(run)) firstSeen.set(run, tr);
    if (MODE === 'stamp') {
      for (const m of txt.matchAll(/\[t=([0-9.]+)\]/g)) {
        if (Number(m[1]) < connectedAt.get(run)) backlog++;
        else {
          lat.push(tr - Number(m[1]));
          emits.push(Number(m[1]));
          // The split: model emit → the event's ts (loom parsed it), and
          // ts → receipt (the store, the feed, the HTTP layer).
          const ts = Date.parse(ev.ts);
          if (ts) { toLoom.push(ts - Number(m[1])); toClient.push(tr - ts); }
        }
      }
    }
  });
  streamingNow--;
  return e;
}));
if (!tCreated) tCreated = now();
const live = made;
clearInterval(sampler);
const tEnd = now();

if (MODE === 'mockllm') {
  // Emit times from mockllm's log: the request's t + (3 + j) × drip for the
  // j-th text delta (message_start, content_block_start and ping first),
  // the first delta only: later ones are chunk-sized pieces loom may join.
  const logFile = arg('mock-log');
  const byGoal = new Map();
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    if (!line) continue;
    const l = JSON.parse(line);
    const m = /LOAD-(\d+):/.exec(l.raw_body || '');
    if (m && l.stream) byGoal.set(Number(m[1]), l.t * 1000);
  }
  for (const { i, run } of live) {
    const t = byGoal.get(i); const f = firstSeen.get(run);
    if (t && f) firstLat.push(f - (t + 4 * DRIP));
  }
}
// Steady state: deltas emitted once every run was created and had 1 s to
// start (the burst of creating RUNS sessions at once is reported apart).
const steady = lat.filter((_, k) => emits[k] >= tCreated + 1000).sort((a, b) => a - b);
const sorted = (MODE === 'stamp' ? lat : firstLat).sort((a, b) => a - b);
const completed = ends.filter((e) => e && e.state === 'completed').length;
const out = {
  mode: MODE, runs: RUNS, created: live.length, completed,
  create_seconds: +((tCreated - t0) / 1000).toFixed(2), total_seconds: +((tEnd - t0) / 1000).toFixed(2),
  samples: sorted.length, backlog_deltas: backlog,
  latency_ms: { p50: +pct(sorted, 50).toFixed(2), p90: +pct(sorted, 90).toFixed(2), p99: +pct(sorted, 99).toFixed(2), max: +(sorted[sorted.length - 1] || NaN).toFixed(2) },
  steady_samples: steady.length,
  steady_latency_ms: { p50: +pct(steady, 50).toFixed(2), p99: +pct(steady, 99).toFixed(2), max: +(steady[steady.length - 1] || NaN).toFixed(2) },
  split_ms: {
    emit_to_event_ts: { p50: +pct(toLoom.sort((a, b) => a - b), 50).toFixed(1), p99: +pct(toLoom, 99).toFixed(1) },
    event_ts_to_receipt: { p50: +pct(toClient.sort((a, b) => a - b), 50).toFixed(1), p99: +pct(toClient, 99).toFixed(1) },
  },
  rss_kb: { idle, peak, peak_streaming_runs: peakStreaming },
  kb_per_streaming_run: idle && peakStreaming ? +((peak - idle) / peakStreaming).toFixed(1) : null,
  errors: errors.length, first_errors: errors.slice(0, 5),
};
console.log(JSON.stringify(out, null, 1));
if (arg('json')) fs.writeFileSync(arg('json'), JSON.stringify(out, null, 1) + '\n');
process.exit(0);
