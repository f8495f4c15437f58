// webhooks.mjs — serve_webhooks.sh: the tenant's webhook (seed 000 §10.4
// item 4) receives approval.requested, artifact.created, run.completed and
// policy.denied, each signed (Standard Webhooks: verified by the npm
// package and by hand), each carrying the run's id; the first delivery,
// answered 500 twice by the receiver, is retried with the same
// webhook-id, at growing gaps, and arrives on the third attempt.
// Environment: WEBHOOK_LOG (the receiver's JSON lines).
// Threading: one event loop.
import fs from 'node:fs';
import { Client, main, check, eq, waitFor } from './client.mjs';

await main('serve_webhooks', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  const log = () => (fs.existsSync(process.env.WEBHOOK_LOG)
    ? fs.readFileSync(process.env.WEBHOOK_LOG, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);

  const seq = await a.start({ goal: 'WH-SEQ: clear scratch, write hook.txt' });
  const apv = await a.pendingApproval(seq.run.run_id);
  await a.expect(200, 'POST', `/approvals/${apv.approval_id}:approve`, { body: { comment: 'ok' } });
  eq((await a.waitState(seq.run.run_id, ['completed', 'failed'])).state, 'completed', 'the webhook run completes');
  const deny = await a.start({ goal: 'WH-DENY: fetch with curl', policy_id: 'policy_no_curl' });
  await a.waitState(deny.run.run_id, ['completed', 'failed', 'blocked_by_policy']);

  const want = ['approval.requested', 'artifact.created', 'run.completed', 'policy.denied'];
  const lines = await waitFor(() => {
    const l = log().filter((x) => x.answered === 200);
    return want.every((t) => l.some((x) => x.type === t)) && l.filter((x) => x.type === 'run.completed').length >= 2 ? log() : null;
  }, 'every webhook type delivered', 30000);
  for (const t of want) {
    const got = lines.filter((x) => x.type === t && x.answered === 200);
    check(got.length > 0, `${t} arrived at the receiver`);
    check(got.every((x) => x.verified_hmac), `every ${t} is signed: HMAC-SHA256 over id.timestamp.body with the tenant's secret`);
    check(got.every((x) => x.verified_pkg !== false), `every ${t} verifies with the standardwebhooks package`, got.map((x) => x.verified_pkg));
    check(got.every((x) => (x.content_type || '').startsWith('application/json') && x.body && x.body.data
      && typeof x.body.timestamp === 'string'), `${t} is a JSON {type, timestamp, data}`, got[0] && got[0].body);
  }
  const ids = new Set([seq.run.run_id, deny.run.run_id]);
  check(lines.every((x) => ids.has(x.body.data.run_id) || JSON.stringify(x.body.data).includes(seq.run.run_id)
    || JSON.stringify(x.body.data).includes(deny.run.run_id)), "every delivery's data names its run");
  const completedStates = lines.filter((x) => x.type === 'run.completed' && x.answered === 200).map((x) => x.body.data.state).sort();
  check(completedStates.includes('completed'), 'run.completed says the state', completedStates);
  const art = lines.find((x) => x.type === 'artifact.created' && x.body.data.name === 'patch.diff');
  check(art && art.body.data.uri === `artifact://${seq.run.run_id}/patch.diff`, 'artifact.created carries the patch URI', art && art.body.data);
  const pd = lines.find((x) => x.type === 'policy.denied');
  check(pd && pd.body.data.tool === 'Bash', 'policy.denied names the tool', pd && pd.body.data);

  // The retries of the first delivery.
  const first = lines[0];
  const attempts = lines.filter((x) => x.id === first.id);
  eq(attempts.map((x) => x.answered), [500, 500, 200], 'the first delivery, answered 500 twice, is retried and delivered on the third attempt');
  const gaps = attempts.slice(1).map((x, i) => x.t - attempts[i].t);
  check(gaps.length === 2 && gaps[0] >= 300 && gaps[1] > gaps[0] * 1.3, 'with growing gaps between the attempts (backoff)', gaps);
  check(new Set(lines.map((x) => x.id)).size === lines.length - 2, 'every other delivery has its own webhook-id, sent once');
});
