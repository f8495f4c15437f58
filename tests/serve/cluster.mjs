// cluster.mjs — pg_cluster.sh's checks, in phases around the kills:
//   load:      N runs made round robin on the three workers (NODE_URL_0..2),
//              each doing one Bash call that appends its number to
//              calls.txt; six of them streamed live (SSE, every
//              visibility) from worker 2, which survives; waits until every
//              run ended (asking worker 0 and 2 only: 1 is killed meanwhile).
//   check:     every run completed, with exactly one run.completed; its
//              stored events are 1..n without hole or repeat; its call ran
//              at most once, and exactly once unless it was recorded as
//              interrupted (tool.interrupted), in which case the model was
//              told (its summary says it did not repeat it); at least one
//              run was reclaimed from the killed worker; the live streams
//              saw their runs' events in order without gaps, the same as
//              stored.
//   metrics:   GET /metrics of workers 0 and 2 (strictly parsed) against
//              what the test did: every run of the tenant completed
//              (RUNS_DONE), none queued, no approval pending, no lease
//              held; each worker counted the runs its log says it
//              abandoned (ABANDONED_0, _2; worker 0 some, after its
//              stall, and fenced writes of them);
//              worker 2 reclaimed some; each histogram counts every claim.
//   approve:   through an --api-only node (SERVE_URL), a run asks for an
//              approval on the worker holding it; the approval is answered
//              on the API node and the run goes on to completed; a cancel
//              made there stops a run a worker is running.
//   term_load: 12 slow runs through worker 2; waits for all to complete
//              (worker 0 gets SIGTERM meanwhile): each completed once, its
//              events contiguous, its call at most once, and some were
//              handed back by the stopping worker.
//   stall_load: the same through worker 2 while worker 0 is SIGSTOPped
//              past its leases and then SIGCONTed (fencing, the lease
//              checked before each call): each completed once, its events
//              contiguous, no call ran twice and none was lost (ranTwice,
//              neverRan, stoppedBeforeCall all 0), and some were reclaimed
//              from the stalled worker.
// Threading: one event loop.
import fs from 'node:fs';
import path from 'node:path';
import { Client, main, check, eq, must, seqsContiguous, ALL, sleep, waitFor } from './client.mjs';
import { parse, value } from './prom.mjs';

const T = process.env.T;
const N = Number(process.env.N || 80);
const WS = path.join(T, 'ws', 'acme-p1');
const phase = process.argv[2];
const idsFile = path.join(T, 'cluster_ids.json');
const streamsFile = path.join(T, 'cluster_streams.json');
const token = process.env.TOKEN_A;

function linesOf(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length);
}

async function waitAllEnded(client, ids, timeoutMs) {
  const until = Date.now() + timeoutMs;
  let left = ids;
  while (left.length && Date.now() < until) {
    const still = [];
    for (const id of left) {
      const r = await client.getRun(id);
      if (['queued', 'running', 'waiting_approval', 'waiting_external'].includes(r.state)) still.push(id);
    }
    left = still;
    if (left.length) await sleep(300);
  }
  return left;
}

// Checks one batch of runs: ids[i]'s call appends `${i}` to file.
// stalled: the batch's worker was SIGSTOPped, not killed. It may wake with
// the model's answer in hand: the lease checked right before each tool
// call stops it there (no call runs twice), and a call it left open in
// the session (asked for, never answered, or answered "not run") is
// recorded as interrupted where the run goes on (none silently lost).
// The counts are printed and each must be 0.
async function checkRuns(a, ids, file, label, stalled = false) {
  const calls = linesOf(file);
  const bad = [];
  const info = { interrupted: 0, reclaimed: 0, handedBack: 0, ranTwice: 0, neverRan: 0, stoppedBeforeCall: 0 };
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    const r = await a.getRun(id);
    const evs = await a.allEvents(id, { visibility: ALL });
    const completedEvents = evs.filter((e) => e.type === 'run.completed').length;
    const interrupted = evs.some((e) => e.type === 'tool.interrupted');
    const reasons = evs.filter((e) => e.type === 'run.state_changed').map((e) => e.payload.reason || '');
    const reclaimed = reasons.some((x) => x.startsWith('reclaimed'));
    if (reclaimed) info.reclaimed++;
    const handedBack = reasons.some((x) => x.startsWith('handed back'));
    if (handedBack) info.handedBack++;
    if (interrupted) info.interrupted++;
    const ran = calls.filter((l) => l === String(i)).length;
    const problems = [];
    if (r.state !== 'completed') problems.push(`state ${r.state} (${JSON.stringify(r.error)})`);
    if (completedEvents !== 1) problems.push(`${completedEvents} run.completed events`);
    if (!seqsContiguous(evs)) problems.push(`seqs ${evs.map((e) => e.seq).join(',')}`);
    if (ran > 1) {
      info.ranTwice++;
      problems.push(`its call ran ${ran} times`);
    } else if (ran === 0 && !interrupted) {
      // Never ran and nobody said so: lost on a move (the stalled worker's
      // session recorded the call, the run went on as if answered).
      if (stalled) info.neverRan++;
      if (handedBack || reclaimed) info.stoppedBeforeCall++;
      problems.push('its call never ran, and was never recorded as interrupted');
    }
    if (interrupted && !/not repeating/.test(r.summary || '')) problems.push(`interrupted, but the model was not told (summary ${r.summary})`);
    if (problems.length) bad.push({ id, i, problems });
  }
  console.log(`# ${label}: ${JSON.stringify(info)}`);
  eq([info.ranTwice, info.neverRan, info.stoppedBeforeCall], [0, 0, 0], `${label}: no call ran twice (ranTwice), none was lost (neverRan, stoppedBeforeCall)`);
  eq(bad, [], `${label}: each of the ${ids.length} runs completed exactly once, its events stored once (1..n), its call run once or recorded as interrupted`);
  return info;
}

await main(`pg_cluster ${phase}`, async () => {
  if (phase === 'load') {
    const nodes = [0, 1, 2].map((k) => new Client(token, process.env[`NODE_URL_${k}`], `node${k}`));
    const ids = [];
    for (let i = 0; i < N; i += 10) {
      const batch = await Promise.all(Array.from({ length: Math.min(10, N - i) }, (_, k) =>
        nodes[(i + k) % 3].start({ goal: `CLUSTER-RUN ${i + k}: CMD{echo ${i + k} >> calls.txt && sleep 1}END` })
          .then((x) => x.run.run_id)));
      ids.push(...batch);
    }
    fs.writeFileSync(idsFile, JSON.stringify(ids));
    const watched = ids.slice(0, 6);
    const streams = await Promise.all(watched.map((id) => nodes[2].stream(id, { visibility: ALL, timeoutMs: 150000 })
      .catch((e) => ({ error: String(e), events: [] }))));
    fs.writeFileSync(streamsFile, JSON.stringify(watched.map((id, k) => ({
      id, end: streams[k].end, error: streams[k].error || null,
      seqs: streams[k].events.map((e) => (e.data && e.data.seq) || null),
      ids: streams[k].events.map((e) => e.id) }))));
    const left = await waitAllEnded(nodes[2], ids, 150000);
    eq(left, [], `every one of the ${N} runs ended`);
    return;
  }
  const a = new Client(token, process.env.SERVE_URL, 'A');
  if (phase === 'metrics') {
    const m = {};
    for (const k of [0, 2]) {
      const c = new Client(token, process.env[`NODE_URL_${k}`], `node${k}`);
      const r = await c.request('GET', '/metrics');
      eq(r.status, 200, `node${k}: GET /metrics answers 200`);
      m[k] = parse(r.text);
      const at = { node: `node${k}` };
      eq([value(m[k], 'loom_runs', { ...at, state: 'completed' }), value(m[k], 'loom_queue_depth', at),
        value(m[k], 'loom_approvals_pending', at), value(m[k], 'loom_runs_held', at)],
        [Number(process.env.RUNS_DONE), 0, 0, 0], `node${k}: every run of the tenant completed, none queued, no approval pending, no lease held`);
      const claims = value(m[k], 'loom_claims_total', at);
      eq(value(m[k], 'loom_claim_latency_seconds_count', at), claims, `node${k}: the claim latency histogram counts each of its ${claims} claims`);
      check(claims >= 1 && value(m[k], 'loom_lease_renewals_total', at) >= 1, `node${k}: it claimed runs and renewed its leases`, claims);
    }
    // (A loaded machine may make a worker late past its 3 s lease outside
    // the stall too: each node's counter is checked against its own log.)
    for (const k of [0, 2]) {
      const abandoned = Number(process.env[`ABANDONED_${k}`]);
      eq(value(m[k], 'loom_runs_abandoned_total', { node: `node${k}` }), abandoned, `node${k} counted the runs it abandoned (as its log says)`);
    }
    check(Number(process.env.ABANDONED_0) >= 1, 'node0 abandoned runs after its stall');
    // Its runs there were cancelled mid-call: their ends were dropped.
    check(value(m[0], 'loom_fencing_refusals_total', { node: 'node0' }) >= 1, 'node0 counted the writes its fences refused or dropped');
    check(value(m[2], 'loom_reclaims_total', { node: 'node2' }) >= 1, 'node2 counted its reclaims');
    return;
  }
  if (phase === 'check') {
    const ids = JSON.parse(fs.readFileSync(idsFile, 'utf8'));
    const info = await checkRuns(a, ids, path.join(WS, 'calls.txt'), 'after the SIGKILL');
    check(info.reclaimed >= 1, 'at least one run was reclaimed from the killed worker and finished elsewhere', info);
    const streams = JSON.parse(fs.readFileSync(streamsFile, 'utf8'));
    const badStreams = [];
    for (const s of streams) {
      const stored = (await a.allEvents(s.id, { visibility: ALL })).map((e) => e.seq);
      const inOrder = s.seqs.every((x, k) => x === k + 1);
      if (s.error || !s.end || !inOrder || JSON.stringify(s.seqs) !== JSON.stringify(stored) ||
          s.ids.some((x, k) => x !== String(k + 1)))
        badStreams.push({ id: s.id, error: s.error, end: s.end, seqs: s.seqs, stored });
    }
    eq(badStreams, [], 'the SSE clients on a surviving worker saw every event of their runs in order, without gaps, to the end');
    return;
  }
  if (phase === 'approve') {
    const { run } = await a.start({ goal: 'CLUSTER-RUN approve: CMD{rm -rf gone && echo approved >> approved.txt}END' });
    const apv = await a.pendingApproval(run.run_id, 30000);
    const t0 = Date.now();
    const answered = await a.expect(200, 'POST', `/approvals/${apv.approval_id}:approve`, { body: { comment: 'from the API node' } });
    eq(answered.status, 'approved', 'the approval answered on the API node is approved');
    // How long the run took to move on (not asserted: no timed checks):
    // the answer travels API node -> loom_controls + NOTIFY -> the holder.
    let moved = null;
    for (let k = 0; k < 1500 && moved === null; k++) {
      const evs = await a.allEvents(run.run_id, { visibility: ALL });
      const at = evs.findIndex((e) => e.type === 'approval.answered');
      if (at >= 0 && evs.slice(at + 1).some((e) => e.type === 'tool.started' || e.type === 'tool.finished')) moved = Date.now() - t0;
      else await sleep(10);
    }
    console.log(`# approval across nodes: the run went on ${moved} ms after the answer was sent on the API node`);
    const done = await a.waitState(run.run_id, ['completed', 'failed', 'cancelled'], 30000);
    eq(done.state, 'completed', 'the run held by a worker proceeded after the approval on the API node');
    eq(linesOf(path.join(WS, 'approved.txt')), ['approved'], 'the approved command ran once');
    // And a cancel made on the API node stops a run a worker is running.
    const slow = (await a.start({ goal: 'CLUSTER-RUN cancel: CMD{echo started >> cancel.txt && sleep 30}END' })).run;
    await waitFor(async () => linesOf(path.join(WS, 'cancel.txt')).length > 0, 'the slow run started its call', 30000);
    const c = await a.expect(200, 'POST', `/runs/${slow.run_id}:cancel`, { body: { reason: 'from the API node' } });
    eq(c.state, 'cancelled', 'a cancel on the API node cancelled the run a worker held');
    return;
  }
  must(phase === 'term_load' || phase === 'stall_load', 'phase is load, check, approve, term_load or stall_load', phase);
  const what = phase === 'term_load' ? 'term' : 'stall';
  const ids = [];
  for (let i = 0; i < 12; i++)
    ids.push((await a.start({ goal: `CLUSTER-RUN ${what} ${i}: CMD{echo ${i} >> ${what}_calls.txt && sleep 4}END` })).run.run_id);
  const left = await waitAllEnded(a, ids, 150000);
  eq(left, [], `every run of the ${what} batch ended`);
  if (what === 'term') {
    const info = await checkRuns(a, ids, path.join(WS, 'term_calls.txt'), 'after the SIGTERM');
    check(info.handedBack >= 1, 'the stopping worker handed runs back, which finished on the other worker', info);
    return;
  }
  const info = await checkRuns(a, ids, path.join(WS, 'stall_calls.txt'), 'after the SIGSTOP and SIGCONT', true);
  check(info.reclaimed >= 1, 'runs of the stalled worker were reclaimed and finished on the other worker', info);
});
