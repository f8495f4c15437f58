// controls.mjs — serve_controls.sh: run controls over HTTP — :cancel,
// :pause → paused → :resume → completed (the seq goes on, nothing
// repeated), multitask_strategy reject (409) / enqueue (queued, runs after)
// / interrupt (the first cancelled, the second completes), sync mode
// (?wait=30 → 200 completed; on a run that asks → 202 run_waiting_approval).
// Threading: one event loop.
import { Client, main, check, eq, checkError, ofType, statesOf, seqsContiguous, ALL, sleep } from './client.mjs';

await main('serve_controls', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');

  // --- cancel ---------------------------------------------------------------
  {
    const { run } = await a.start({ goal: 'CTL-SLOW: a long answer to cancel' });
    await a.waitState(run.run_id, 'running');
    await waitDeltas(a, run.run_id, 5);
    const c = await a.expect(200, 'POST', `/runs/${run.run_id}:cancel`, { body: { reason: 'no longer needed' } });
    check(['cancelled', 'running'].includes(c.state), ':cancel answers the Run (cancelled, or running while it stops)', c.state);
    const end = await a.waitState(run.run_id, ['cancelled', 'completed', 'failed']);
    eq(end.state, 'cancelled', 'a cancelled run ends cancelled');
    check(end.ended_at && end.current_step === 'ended', 'it has ended_at and current_step ended', end);
    const again = await a.post(`/runs/${run.run_id}:cancel`, {});
    checkError(again, 409, 'invalid_state_transition', ':cancel on a cancelled run');
    const evs = await a.allEvents(run.run_id);
    eq(statesOf(evs).pop(), 'cancelled', 'the last run.state_changed says cancelled');
  }

  // --- pause / resume -------------------------------------------------------
  {
    const { run, session } = await a.start({ goal: 'CTL-PAUSE: one step, a pause, then the rest' });
    await a.waitState(run.run_id, 'running');
    const p = await a.expect(200, 'POST', `/runs/${run.run_id}:pause`);
    check(['running', 'paused'].includes(p.state), ':pause answers the Run (it stops at the next turn boundary)', p.state);
    const paused = await a.waitState(run.run_id, ['paused', 'completed', 'failed']);
    eq(paused.state, 'paused', 'the paused run is paused');
    const before = await a.allEvents(run.run_id, { visibility: ALL });
    check(seqsContiguous(before), 'the paused run has seq 1..n with no hole');
    const sess = await a.expect(200, 'GET', `/sessions/${session.session_id}`);
    check(sess.active_run_id === null || sess.active_run_id === run.run_id, 'the session names the paused run or none', sess.active_run_id);
    const pp = await a.post(`/runs/${run.run_id}:pause`);
    checkError(pp, 409, 'invalid_state_transition', ':pause on a paused run');
    const rs = await a.expect(200, 'POST', `/runs/${run.run_id}:resume`, { body: { note: 'RESUME-NOTE: carry on' } });
    check(['queued', 'running', 'completed'].includes(rs.state), ':resume answers the Run queued or running', rs.state);
    const end = await a.waitState(run.run_id, ['completed', 'failed', 'cancelled']);
    eq(end.state, 'completed', 'the resumed run completes');
    const after = await a.allEvents(run.run_id, { visibility: ALL });
    check(seqsContiguous(after), 'after the resume the seq goes on 1..n: no hole, no repeat', after.map((e) => e.seq));
    eq(after.slice(0, before.length), before, 'the events before the pause are unchanged after the resume');
    const st = statesOf(after.slice(before.length));
    check(st.includes('running') && st.pop() === 'completed', 'after the pause: run.state_changed to running, then completed',
      statesOf(after));
    check(statesOf(before).includes('paused'), 'the pause was a run.state_changed to paused');
    const rr = await a.post(`/runs/${run.run_id}:resume`, {});
    checkError(rr, 409, 'invalid_state_transition', ':resume on a completed run');
  }

  // --- multitask_strategy: reject (the default) -----------------------------
  const second = async (session, goal, strategy) => {
    const t = await a.task({ session_id: session.session_id, goal, agent_profile: 'coding_default' });
    const body = { task_id: t.task_id };
    if (strategy) body.multitask_strategy = strategy;
    return a.post('/runs', body);
  };
  {
    const { run, session } = await a.start({ goal: 'CTL-SLOW: the active run (reject)' });
    await a.waitState(run.run_id, 'running');
    for (const strat of [undefined, 'reject']) {
      const r = await second(session, 'CTL-REJ-B: must not start', strat);
      checkError(r, 409, 'invalid_state_transition', `a second run on a busy session with strategy ${strat || '(default)'}`);
      check(r.json && JSON.stringify(r.json.error).includes(run.run_id), 'the 409 names the active run', r.json);
    }
    const live = await a.getRun(run.run_id);
    check(['running', 'queued'].includes(live.state), 'the active run goes on after a rejected second run', live.state);
    await a.expect(200, 'POST', `/runs/${run.run_id}:cancel`, {});
    await a.waitState(run.run_id, 'cancelled');
  }

  // --- enqueue --------------------------------------------------------------
  {
    const { run, session } = await a.start({ goal: 'CTL-SLOW: the active run (enqueue)' });
    await a.waitState(run.run_id, 'running');
    const r = await second(session, 'CTL-ENQ-B: after the first', 'enqueue');
    eq(r.status, 201, 'an enqueued run is created (201)');
    const b = r.json;
    eq([b.state, b.multitask_strategy, b.current_step], ['queued', 'enqueue', 'queued'], 'it is queued, with strategy enqueue');
    await sleep(300);
    eq((await a.getRun(b.run_id)).state, 'queued', 'it stays queued while the first run works');
    const first = await a.waitState(run.run_id, ['completed', 'failed', 'cancelled'], 60000);
    eq(first.state, 'completed', 'the first run completes undisturbed');
    const bEnd = await a.waitState(b.run_id, ['completed', 'failed', 'cancelled'], 30000);
    eq(bEnd.state, 'completed', 'then the queued run runs and completes');
    check(Date.parse(bEnd.started_at) >= Date.parse(first.ended_at), 'the queued run started after the first ended',
      [first.ended_at, bEnd.started_at]);
    const evs = await a.allEvents(b.run_id);
    const st = statesOf(evs);
    check(st[0] === 'running' || st.includes('running'), 'its events say queued → running → completed', st);
  }

  // --- interrupt ------------------------------------------------------------
  {
    const { run, session } = await a.start({ goal: 'CTL-SLOW: the active run (interrupt)' });
    await a.waitState(run.run_id, 'running');
    await waitDeltas(a, run.run_id, 3);
    const r = await second(session, 'CTL-INT-B: instead of the first', 'interrupt');
    eq(r.status, 201, 'an interrupting run is created (201)');
    const first = await a.waitState(run.run_id, ['cancelled', 'completed', 'failed']);
    eq(first.state, 'cancelled', 'the interrupted run is cancelled');
    const evs = await a.allEvents(run.run_id);
    const last = evs.filter((e) => e.type === 'run.state_changed' && 'from' in e.payload).pop();
    check(last && last.payload.reason && last.payload.reason.includes(r.json.run_id),
      'its last run.state_changed gives the reason: interrupted by the new run', last && last.payload);
    const bEnd = await a.waitState(r.json.run_id, ['completed', 'failed', 'cancelled'], 30000);
    eq(bEnd.state, 'completed', 'the interrupting run completes');
  }

  // --- sync mode ------------------------------------------------------------
  {
    const s = await a.session({ project_id: 'p1' });
    const t = await a.task({ session_id: s.session_id, goal: 'SYNC-FAST: answer at once', agent_profile: 'coding_default' });
    const r = await a.request('POST', '/runs', { body: { task_id: t.task_id }, query: { wait: 30 } });
    eq(r.status, 200, 'POST /runs?wait=30 on a quick run answers 200');
    check(r.json && r.json.state === 'completed' && r.json.ended_at, 'with the completed Run', r.json);
    const bad = await a.request('POST', '/runs', { body: { task_id: t.task_id }, query: { wait: 301 } });
    checkError(bad, 400, 'invalid_request', 'wait=301 (over 300)');
  }
  {
    const s = await a.session({ project_id: 'p1' });
    const t = await a.task({ session_id: s.session_id, goal: 'SYNC-APV: remove tmp', agent_profile: 'coding_default' });
    const r = await a.request('POST', '/runs', { body: { task_id: t.task_id }, query: { wait: 30 } });
    checkError(r, 202, 'run_waiting_approval', 'POST /runs?wait=30 on a run that asks');
    const e = r.json && r.json.error;
    check(e && e.retryable === true && /^run_/.test(e.run_id || ''), 'the 202 is retryable and names the run', e);
    if (e && e.run_id) {
      const run = await a.getRun(e.run_id);
      eq(run.state, 'waiting_approval', 'that run is waiting_approval');
      const apv = await a.pendingApproval(e.run_id);
      await a.expect(200, 'POST', `/approvals/${apv.approval_id}:reject`, {});
      eq((await a.waitState(e.run_id, ['completed', 'failed'])).state, 'completed', 'rejected, it completes');
    }
  }
  void ofType;
});

async function waitDeltas(c, id, n) {
  const end = Date.now() + 20000;
  while (Date.now() < end) {
    const p = await c.expect(200, 'GET', `/runs/${id}/events`, { query: { limit: 1000 } });
    if (p.items.filter((e) => e.type === 'token.delta').length >= n) return;
    await sleep(50);
  }
  throw new Error(`run ${id}: fewer than ${n} token deltas in 20 s`);
}
