// exit_plan.mjs — serve_exit_plan.sh: ExitPlanMode in loom serve. A run in
// plan mode (policy_plan) whose model presents a plan waits on an approval
// for ExitPlanMode that carries the plan and the mode approval restores;
// rejected, the model is told it is still in plan mode and the run
// completes; approved, the model is told the mode it is in now.
// Threading: one event loop.
import { Client, main, check, eq } from './client.mjs';

await main('serve_exit_plan', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  for (const [goal, verb, want] of [
    ['PLAN-SRV-REJ: plan it', 'reject', 'you are still in plan mode'],
    ['PLAN-SRV-OK: plan it', 'approve', 'the permission mode is now default'],
  ]) {
    const { run } = await a.start({ goal, policy_id: 'policy_plan' });
    const apv = await a.pendingApproval(run.run_id);
    const shown = JSON.stringify(apv);
    check(shown.includes('ExitPlanMode'), `${verb}: the approval is ExitPlanMode's`, apv);
    check(shown.includes('Write notes.txt with the summary'), `${verb}: it carries the plan`, apv);
    check(shown.includes('approving leaves plan mode for default'), `${verb}: and the mode approval restores`, apv);
    const ans = await a.expect(200, 'POST', `/approvals/${apv.approval_id}:${verb}`, { body: {} });
    eq(ans.status, verb === 'reject' ? 'rejected' : 'approved', `${verb}: the approval is answered`);
    const end = await a.waitState(run.run_id, ['completed', 'failed', 'blocked_by_policy', 'cancelled']);
    eq(end.state, 'completed', `${verb}: the run completes`);
    const tr = await a.expect(200, 'GET', `/runs/${run.run_id}/transcript`);
    check(JSON.stringify(tr.items).includes(want), `${verb}: the model is told "${want}"`, tr.items);
  }
});
