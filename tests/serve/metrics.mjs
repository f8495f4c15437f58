// metrics.mjs — serve_metrics.sh's checks of GET /metrics on one server.
// Threading: one event loop.
import fs from 'node:fs';
import path from 'node:path';
import { Client, main, check, eq } from './client.mjs';
import { parse, value } from './prom.mjs';

const WS = path.join(process.env.T, 'ws', 'acme-p1');
const STATES = ['queued', 'running', 'waiting_approval', 'waiting_external', 'paused', 'completed',
  'failed', 'cancelled', 'blocked_by_policy', 'blocked_by_capability'];

async function scrape(client) {
  const r = await client.request('GET', '/metrics');
  eq(r.status, 200, `${client.name}: GET /metrics answers 200`);
  check((r.headers['content-type'] || '').startsWith('text/plain; version=0.0.4'),
    `${client.name}: the body is the text format 0.0.4`, r.headers['content-type']);
  return parse(r.text);
}

function refuses(text, why) {
  let err = null;
  try { parse(text); } catch (e) { err = e; }
  check(err !== null, `the parser refuses ${why}`, text);
}

await main('serve_metrics', async () => {
  // The parser is strict (a test of the test).
  refuses('x 1\n', 'a sample with no TYPE');
  refuses('# TYPE x gauge\nx{a="b\\q"} 1\n', 'a bad escape');
  refuses('# TYPE x gauge\nx{a="b"} one\n', 'a value that is not a number');
  refuses('# TYPE x gauge\nx 1', 'no final newline');
  refuses('# TYPE x gauge\nx 1\nx 2\n', 'the same sample twice');
  refuses('# TYPE x gauge\n# TYPE y gauge\nx{a="1"} 1\ny 1\nx{a="2"} 1\n', 'a family split');
  refuses('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', 'buckets not cumulative');
  refuses('# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n', '+Inf not the count');
  parse('# HELP h a help\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1.5\nh_count 2\n');

  const a = new Client(process.env.TOKEN_A, undefined, 'A (admin)');
  const viewer = new Client(process.env.TOKEN_AV, undefined, 'viewer');
  const b = new Client(process.env.TOKEN_B, undefined, 'B (globex admin)');
  const anon = new Client(null, undefined, 'no token');
  eq((await anon.request('GET', '/metrics')).status, 401, 'GET /metrics without a token: 401');
  eq((await viewer.request('GET', '/metrics')).status, 403, 'GET /metrics with a viewer token: 403');

  const ids = [];
  for (let i = 0; i < 3; i++)
    ids.push((await a.start({ goal: `CLUSTER-RUN m${i}: CMD{echo ${i} >> metrics_calls.txt}END` })).run.run_id);
  for (const id of ids) eq((await a.waitState(id, ['completed', 'failed', 'cancelled'])).state, 'completed', `run ${id} completed`);
  const { run } = await a.start({ goal: 'CLUSTER-RUN approve: CMD{rm -rf gone && echo approved >> approved.txt}END' });
  const apv = await a.pendingApproval(run.run_id, 30000);

  let m = await scrape(a);
  const want = { completed: 3, waiting_approval: 1 };
  const got = Object.fromEntries(STATES.map((s) => [s, value(m, 'loom_runs', { state: s, tenant: 'acme' })]));
  eq(got, Object.fromEntries(STATES.map((s) => [s, want[s] || 0])), 'loom_runs per state: the 3 completed runs and the one waiting for its approval');
  eq(value(m, 'loom_queue_depth', { tenant: 'acme' }), 0, 'loom_queue_depth: nothing queued');
  eq(value(m, 'loom_approvals_pending', { tenant: 'acme' }), 1, 'loom_approvals_pending: the one approval');
  check(m.get('loom_runs').samples.every((s) => s.labels.node === 'standalone'), 'every sample names the node (standalone without --cluster)');
  eq(['loom_claims_total', 'loom_claim_latency_seconds', 'loom_fencing_refusals_total'].filter((k) => m.has(k)), [],
    'no worker counters without --cluster');

  const mb = await scrape(b);
  eq(STATES.map((s) => value(mb, 'loom_runs', { state: s, tenant: 'globex' })), STATES.map(() => 0), "the other tenant's admin sees its own (zero) runs");
  eq(value(mb, 'loom_approvals_pending', { tenant: 'globex' }), 0, "…and none of acme's approvals");

  await a.expect(200, 'POST', `/approvals/${apv.approval_id}:approve`, { body: {} });
  eq((await a.waitState(run.run_id, ['completed', 'failed', 'cancelled'])).state, 'completed', 'the approved run completed');
  m = await scrape(a);
  eq([value(m, 'loom_runs', { state: 'completed' }), value(m, 'loom_runs', { state: 'waiting_approval' }),
    value(m, 'loom_approvals_pending')], [4, 0, 0], 'after the answer: 4 completed, none waiting, no approval pending');
  eq(fs.readFileSync(path.join(WS, 'metrics_calls.txt'), 'utf8').split('\n').filter(Boolean).length, 3, 'each run made its call once');
});
