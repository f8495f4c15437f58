// states.mjs — serve_states.sh: all ten run states of seed 000 §10.5,
// each reached and observed through GET /runs/{id} and the events:
// queued (enqueued behind an active run), running, waiting_approval,
// waiting_external (AskUserQuestion, answered with POST /runs/{id}:input),
// paused, completed, failed
// (mockllm answers 500 until the retries run out), cancelled,
// blocked_by_policy (the task's policy denies Bash outright, which its
// profile lists; a denial with a way around completes instead),
// blocked_by_capability (a profile whose tools.allow names a tool the
// server does not have); and invalid_state_transition for the moves the
// machine does not have.
// Threading: one event loop.
import { Client, main, check, eq, checkError, statesOf, ofType, sleep } from './client.mjs';

await main('serve_states', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  const seen = new Set();
  const saw = (st) => seen.add(st);
  const ENDED = ['completed', 'failed', 'cancelled', 'blocked_by_policy', 'blocked_by_capability', 'paused'];

  // running + queued + cancelled
  {
    const { run, session } = await a.start({ goal: 'ST-SLOW: a long answer' });
    const r1 = await a.waitState(run.run_id, 'running');
    saw(r1.state);
    check(['model_call', 'queued'].includes(r1.current_step) || /^tool:/.test(r1.current_step || ''),
      'a running run names its current step', r1.current_step);
    const t = await a.task({ session_id: session.session_id, goal: 'ST-QUEUED-B: behind it', agent_profile: 'coding_default' });
    const q = await a.expect(201, 'POST', '/runs', { body: { task_id: t.task_id, multitask_strategy: 'enqueue' } });
    const qq = await a.getRun(q.run_id);
    eq(qq.state, 'queued', 'a run enqueued behind an active one is queued');
    saw(qq.state);
    const listed = await a.expect(200, 'GET', '/runs', { query: { state: 'queued', session_id: session.session_id } });
    eq(listed.items.map((x) => x.run_id), [q.run_id], 'GET /runs?state=queued lists it');
    await a.expect(200, 'POST', `/runs/${run.run_id}:cancel`, {});
    const c = await a.waitState(run.run_id, ENDED);
    eq(c.state, 'cancelled', 'the cancelled run is cancelled');
    saw(c.state);
    const qe = await a.waitState(q.run_id, ENDED);
    eq(qe.state, 'completed', 'the queued run then completes');
    saw(qe.state);
    const bad = await a.post(`/runs/${run.run_id}:cancel`, {});
    checkError(bad, 409, 'invalid_state_transition', ':cancel on a cancelled run');
    const bad2 = await a.post(`/runs/${qe.run_id}:resume`, {});
    checkError(bad2, 409, 'invalid_state_transition', ':resume on a completed run');
    const bad3 = await a.post(`/runs/${qe.run_id}:pause`, {});
    checkError(bad3, 409, 'invalid_state_transition', ':pause on a completed run');
  }

  // waiting_approval
  {
    const { run } = await a.start({ goal: 'ST-APV: remove old' });
    const w = await a.waitState(run.run_id, 'waiting_approval');
    saw(w.state);
    const resumeW = await a.post(`/runs/${run.run_id}:resume`, {});
    checkError(resumeW, 409, 'invalid_state_transition', ':resume on a run waiting for approval');
    const apv = await a.pendingApproval(run.run_id);
    await a.expect(200, 'POST', `/approvals/${apv.approval_id}:approve`, {});
    eq((await a.waitState(run.run_id, ENDED)).state, 'completed', 'approved, the waiting run completes');
  }

  // waiting_external
  {
    const { run } = await a.start({ goal: 'ST-EXT: ask which environment' });
    let st = null;
    const end = Date.now() + 10000;
    while (Date.now() < end) {
      st = await a.getRun(run.run_id);
      if (st.state === 'waiting_external' || ENDED.includes(st.state)) break;
      await sleep(50);
    }
    eq(st.state, 'waiting_external', 'AskUserQuestion: the run waits for an outside answer (waiting_external)');
    saw(st.state);
    eq(st.current_step, 'waiting_external', 'its current_step says so too');
    const asked = ofType(await a.allEvents(run.run_id), 'input.requested');
    check(asked.length === 1 && asked[0].payload.questions?.[0]?.question === 'Which environment?',
      'an input.requested event carries the question', asked.map((e) => e.payload));
    const inputId = asked[0]?.payload.input_id;
    checkError(await a.request('POST', `/runs/${run.run_id}:input`, { body: { input_id: 'inp_not_this_one', text: 'x' } }),
      404, 'resource_not_found', 'an answer to another input id');
    const back = await a.expect(200, 'POST', `/runs/${run.run_id}:input`, { body: { input_id: inputId, answers: { 'Which environment?': 'staging' } } });
    check(['running', 'completed'].includes(back.state), 'answered, the run works again', back.state);
    const done = await a.waitState(run.run_id, ENDED);
    eq(done.state, 'completed', 'and completes');
    eq(done.summary, 'Thanks, noted.', 'with the reply the model gave once it had the answer');
    const res = ofType(await a.allEvents(run.run_id), 'input.resolved');
    check(res.length === 1 && res[0].payload.status === 'answered', 'input.resolved says answered', res.map((e) => e.payload));
    checkError(await a.request('POST', `/runs/${run.run_id}:input`, { body: { text: 'late' } }),
      409, 'invalid_state_transition', 'an answer to a run that asks nothing');
  }

  // paused
  {
    const { run } = await a.start({ goal: 'ST-PAUSE: pause me' });
    await a.waitState(run.run_id, 'running');
    await a.expect(200, 'POST', `/runs/${run.run_id}:pause`);
    const p = await a.waitState(run.run_id, ENDED);
    eq(p.state, 'paused', 'a paused run is paused');
    saw(p.state);
    await a.expect(200, 'POST', `/runs/${run.run_id}:resume`, { body: { note: 'RESUME-NOTE: go on' } });
    eq((await a.waitState(run.run_id, ['completed', 'failed', 'cancelled'])).state, 'completed', 'resumed, it completes');
  }

  // failed: the model answers 500 until the retries run out
  {
    const { run } = await a.start({ goal: 'ST-FAIL: the model is down' });
    const f = await a.waitState(run.run_id, ENDED, 60000);
    eq(f.state, 'failed', 'a run whose model keeps answering 500 fails');
    saw(f.state);
    check(f.error && typeof f.error.code === 'string' && f.error.code !== 'run_resumable' && f.error.message,
      'the failed run carries an error code and message', f.error);
    const evs = await a.allEvents(f.run_id);
    check(ofType(evs, 'warning.emitted').some((e) => e.payload.kind === 'model_retry'), 'the retries were warned of on the way');
  }

  // blocked_by_policy (docs/server-runs.md): the profile lists bash, the
  // task's policy denies Bash outright — the server has the tool, the
  // policy forbids it: the run is blocked before it starts.
  {
    const { run } = await a.start({ goal: 'ST-POLICY: fetch the page with curl', policy_id: 'policy_no_bash' });
    const b = await a.waitState(run.run_id, ENDED, 30000);
    eq(b.state, 'blocked_by_policy', "a task whose policy denies outright a tool its profile needs (Bash) is blocked_by_policy");
    saw(b.state);
    check(b.error && b.error.code === 'run_blocked_by_policy' && /policy_no_bash/.test(b.error.message) && /Bash/.test(b.error.message),
      'its error is run_blocked_by_policy naming the policy and the tool', b.error);
    const rs = await a.post(`/runs/${run.run_id}:resume`, {});
    checkError(rs, 409, 'invalid_state_transition', ':resume on a run blocked by policy');
  }
  // A denial with a way around is not a block: the policy denies curl, the
  // model tries twice, gives up in words — completed, the denials audited.
  {
    const { run } = await a.start({ goal: 'ST-POLICY: fetch the page with curl', policy_id: 'policy_no_curl' });
    const b = await a.waitState(run.run_id, ENDED, 30000);
    eq(b.state, 'completed', 'a run whose denied calls have a way around (the model answers in words) completes');
    const audit = await a.allEvents(run.run_id, { visibility: 'user,system,audit' });
    check(ofType(audit, 'policy.denied').length === 2, 'both denied curl calls are policy.denied audit events', ofType(audit, 'policy.denied').length);
    check(ofType(audit, 'tool.failed').length >= 2 && ofType(audit, 'tool.finished').filter((e) => !e.payload.is_error).length === 0,
      'the denied tool never ran');
  }

  // blocked_by_capability
  {
    const { run } = await a.start({ goal: 'ST-CAP: teleport the files', agent_profile: 'needs_teleport' });
    const b = await a.waitState(run.run_id, ENDED, 30000);
    eq(b.state, 'blocked_by_capability', 'a profile naming a tool the server lacks blocks the run: blocked_by_capability');
    saw(b.state);
    check(b.error && b.error.code === 'run_blocked_by_capability' && /teleport/.test(b.error.message),
      'its error is run_blocked_by_capability naming teleport', b.error);
    const rs = await a.post(`/runs/${run.run_id}:resume`, {});
    checkError(rs, 409, 'invalid_state_transition', ':resume on a blocked run');
  }

  // every state change the server made went through its table: a final
  // check over one run's events.
  {
    const { run } = await a.start({ goal: 'ST-DONE: quick' });
    const d = await a.waitState(run.run_id, ENDED);
    saw(d.state);
    const st = statesOf(await a.allEvents(run.run_id));
    check(st.includes('running') && st[st.length - 1] === 'completed', "a plain run's server states: … running … completed", st);
  }

  const all = ['queued', 'running', 'waiting_approval', 'waiting_external', 'paused', 'completed', 'failed',
    'cancelled', 'blocked_by_policy', 'blocked_by_capability'];
  const missing = all.filter((s) => !seen.has(s));
  console.log(`# states observed: ${[...seen].join(', ')}`);
  check(missing.length === 0, 'every state of the ten was reached', missing);
});
