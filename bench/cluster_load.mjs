// cluster_load.mjs RUNS URL… — bench/cluster.sh's client: makes RUNS runs
// (session, task, run; 16 at a time, round robin over the URLs), each one
// tiny Bash call against mockllm, waits until every one ended, and prints
// one JSON line: runs per second over the whole batch (first run made to
// last run ended, by the runs' own created_at / ended_at) and the queue
// wait (created_at → started_at: a worker claimed and started it) p50 and
// p95. Plain fetch, no validation: the client should cost the 2 cores as
// little as it can. Figures only; nothing is asserted.
const [runsArg, ...urls] = process.argv.slice(2);
const RUNS = Number(runsArg);
const token = process.env.TOKEN_A;
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

async function call(base, method, p, body) {
  const r = await fetch(base + p, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

async function make(i) {
  const base = urls[i % urls.length];
  const s = await call(base, 'POST', '/sessions', { project_id: 'p1', app_id: 'bench', user_id: 'u_bench' });
  const t = await call(base, 'POST', '/tasks', { session_id: s.session_id, goal: `CLUSTER-RUN ${i}: CMD{true}END`, agent_profile: 'coding_default' });
  return (await call(base, 'POST', '/runs', { task_id: t.task_id })).run_id;
}

const ids = [];
for (let i = 0; i < RUNS; i += 16)
  ids.push(...await Promise.all(Array.from({ length: Math.min(16, RUNS - i) }, (_, k) => make(i + k))));
const ACTIVE = new Set(['queued', 'running', 'waiting_approval', 'waiting_external']);
const docs = new Map();
let left = ids;
const until = Date.now() + 600000;
while (left.length && Date.now() < until) {
  const still = [];
  for (let k = 0; k < left.length; k += 16) {
    const got = await Promise.all(left.slice(k, k + 16).map((id) => call(urls[0], 'GET', `/runs/${id}`)));
    for (const r of got) (ACTIVE.has(r.state) ? still.push(r.run_id) : docs.set(r.run_id, r));
  }
  left = still;
  if (left.length) await new Promise((r) => setTimeout(r, 200));
}
const all = [...docs.values()];
const ms = (x) => Date.parse(x);
const first = Math.min(...all.map((r) => ms(r.created_at)));
const last = Math.max(...all.map((r) => ms(r.ended_at)));
const waits = all.filter((r) => r.started_at).map((r) => ms(r.started_at) - ms(r.created_at)).sort((a, b) => a - b);
const pct = (p) => waits.length ? waits[Math.min(waits.length - 1, Math.floor(p * waits.length))] : null;
console.log(JSON.stringify({
  runs: RUNS, ended: all.length, completed: all.filter((r) => r.state === 'completed').length,
  seconds: (last - first) / 1000, runs_per_s: all.length / ((last - first) / 1000),
  wait_p50_ms: pct(0.5), wait_p95_ms: pct(0.95),
}));
