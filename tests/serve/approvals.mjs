// approvals.mjs — serve_approvals.sh: approvals as objects (seed 000 §10.5)
// — rejected (the model is told; the run completes), expired (the policy's
// 1 s timeout; answering then is 410 run_approval_expired), taken over (an
// approver of the same tenant answers the approval another client watches),
// and answered twice (409).
// Threading: one event loop; watcher streams run beside the answers.
import { Client, main, check, eq, checkError, ofType, sleep } from './client.mjs';

await main('serve_approvals', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  const bob = new Client(process.env.TOKEN_A2, undefined, 'A2 (bob)');
  const viewer = new Client(process.env.TOKEN_AV, undefined, 'viewer');

  // --- reject ---------------------------------------------------------------
  {
    const { run } = await a.start({ goal: 'APV-REJ: remove the cache folder' });
    const apv = await a.pendingApproval(run.run_id);
    const v = await viewer.post(`/approvals/${apv.approval_id}:reject`, {});
    checkError(v, 403, 'project_scope_denied', 'a viewer may not answer an approval');
    const ans = await a.expect(200, 'POST', `/approvals/${apv.approval_id}:reject`,
      { body: { actor_id: 'sec_lead', comment: 'the cache is still needed' } });
    eq([ans.status, ans.actor_id, ans.comment], ['rejected', 'sec_lead', 'the cache is still needed'],
      ':reject answers rejected with the actor and the comment');
    const end = await a.waitState(run.run_id, ['completed', 'failed', 'blocked_by_policy', 'cancelled']);
    eq(end.state, 'completed', 'after a rejection the model is told and the run completes');
    const evs = await a.allEvents(run.run_id);
    const resolved = ofType(evs, 'approval.resolved')[0];
    check(resolved && resolved.payload.status === 'rejected' && resolved.payload.approved === false,
      'approval.resolved says rejected', resolved && resolved.payload);
    check(ofType(evs, 'tool.failed').some((e) => e.payload.tool === 'Bash'),
      'the rejected Bash call ends in tool.failed (it never ran)');
    const tr = await a.expect(200, 'GET', `/runs/${run.run_id}/transcript`);
    check(JSON.stringify(tr.items).includes('the cache is still needed'),
      "the model was told, with the reviewer's comment", tr.items.length);
    check(JSON.stringify(tr.items).includes('removal was rejected'), "the model's answer after the rejection is in the transcript");
    const again = await a.post(`/approvals/${apv.approval_id}:approve`, {});
    checkError(again, 409, 'invalid_state_transition', 'answering a rejected approval again');
    const audit = await a.allEvents(run.run_id, { visibility: 'user,system,audit' });
    const answered = ofType(audit, 'approval.answered')[0];
    check(answered && answered.visibility === 'audit' && answered.payload.actor_id === 'sec_lead' && answered.payload.decision,
      'the answer is audited: an approval.answered event of audit visibility with the actor', answered);
  }

  // --- expiry ---------------------------------------------------------------
  {
    const { run } = await a.start({ goal: 'APV-EXP: remove the cache folder', policy_id: 'policy_fast_expiry' });
    const apv = await a.pendingApproval(run.run_id);
    eq(apv.timeout_seconds, 1, "the approval's timeout is the policy's 1 s");
    const end = await a.waitState(run.run_id, ['completed', 'failed', 'blocked_by_policy'], 30000);
    const got = await a.approval(apv.approval_id);
    eq(got.status, 'expired', 'unanswered past its timeout, the approval is expired');
    check(end.state === 'completed', 'the model is told it expired and the run completes', end);
    const late = await a.post(`/approvals/${apv.approval_id}:approve`, { comment: 'too late' });
    checkError(late, 410, 'run_approval_expired', 'approving an expired approval');
    check(late.json && late.json.error.run_id === run.run_id, 'the 410 names the run', late.json);
    const lateR = await a.post(`/approvals/${apv.approval_id}:reject`, {});
    checkError(lateR, 410, 'run_approval_expired', 'rejecting an expired approval');
    const evs = await a.allEvents(run.run_id);
    check(ofType(evs, 'approval.resolved').some((e) => e.payload.status === 'expired'),
      'approval.resolved says expired');
    const pending = await a.expect(200, 'GET', '/approvals', { query: { run_id: run.run_id, status: 'pending' } });
    eq(pending.items, [], 'no approval of that run is left pending');
  }

  // --- takeover -------------------------------------------------------------
  {
    const { run } = await a.start({ goal: 'APV-TAKE: remove the build folder' });
    // A watches the stream and sees the card; bob (another token) answers.
    const watching = a.stream(run.run_id, { timeoutMs: 60000 });
    const apv = await a.pendingApproval(run.run_id);
    const seenByBob = await bob.approval(apv.approval_id);
    eq(seenByBob.status, 'pending', 'a second approver of the tenant sees the pending approval');
    const ans = await bob.expect(200, 'POST', `/approvals/${apv.approval_id}:approve`, { body: { comment: 'taking this one' } });
    eq([ans.status, ans.actor_id], ['approved', 'bob'], "the approval taken over is approved, the actor the second token's (bob)");
    const late = await a.post(`/approvals/${apv.approval_id}:approve`, {});
    checkError(late, 409, 'invalid_state_transition', "the first client's answer after the takeover");
    const sse = await watching;
    check(sse.end && sse.end.state === 'completed', "the first client's stream sees the run complete");
    const res = ofType(sse.events, 'approval.resolved')[0];
    check(res && res.data.payload.status === 'approved', "the first client's stream shows the approval resolved approved");
    const byStatus = await a.expect(200, 'GET', '/approvals', { query: { status: 'approved' } });
    check(byStatus.items.some((x) => x.approval_id === apv.approval_id), 'GET /approvals?status=approved lists it');
  }

  // --- a run that ends with its approval pending: cancelled ---------------
  {
    const { run } = await a.start({ goal: 'APV-TAKE: remove the build folder (then cancelled)' });
    const apv = await a.pendingApproval(run.run_id);
    await a.expect(200, 'POST', `/runs/${run.run_id}:cancel`, { body: { reason: 'changed my mind' } });
    await a.waitState(run.run_id, 'cancelled');
    await sleep(100);
    eq((await a.approval(apv.approval_id)).status, 'cancelled', 'a run cancelled while waiting leaves its approval cancelled');
  }
});
