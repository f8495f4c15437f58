// priority.mjs — pg_priority.sh's checks: one worker with one slot, held
// by a slow run while six more are queued with priorities; they start in
// priority order (highest first), equal ones oldest first.
// Threading: one event loop.
import { Client, main, check, eq, checkError, waitFor } from './client.mjs';

await main('pg_priority', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  const make = async (goal, priority) => {
    const s = await a.session({ project_id: 'p1', app_id: 'e2e', user_id: 'u_prio' });
    const t = await a.task({ session_id: s.session_id, goal, agent_profile: 'coding_default' });
    return a.run(priority === undefined ? { task_id: t.task_id } : { task_id: t.task_id, priority });
  };
  const blocker = await make('CLUSTER-RUN blocker: CMD{sleep 4}END');
  await waitFor(async () => (await a.getRun(blocker.run_id)).state === 'running', 'the blocker runs', 30000);
  const s = await a.session({ project_id: 'p1', app_id: 'e2e', user_id: 'u_prio' });
  const t = await a.task({ session_id: s.session_id, goal: 'CLUSTER-RUN bad', agent_profile: 'coding_default' });
  checkError(await a.post('/runs', { task_id: t.task_id, priority: 5000 }), 400, 'invalid_request', 'a priority above 1000 is refused');
  checkError(await a.post('/runs', { task_id: t.task_id, priority: 'high' }), 400, 'invalid_request', 'a priority that is not an integer is refused');
  const order = [['low_a', undefined], ['low_b', -1], ['mid', 3], ['top', 10], ['low_c', undefined], ['mid_b', 3]];
  const runs = {};
  for (const [name, p] of order) runs[name] = await make(`CLUSTER-RUN ${name}: CMD{true}END`, p);
  eq([runs.top.priority, runs.low_a.priority, runs.low_b.priority], [10, 0, -1], 'a run says its priority (0 when not given)');
  const ended = {};
  for (const [name] of order) ended[name] = await a.waitState(runs[name].run_id, ['completed', 'failed', 'cancelled'], 60000);
  check(Object.values(ended).every((r) => r.state === 'completed'), 'every run completed', Object.values(ended).map((r) => r.state));
  const blockerEnd = Date.parse((await a.getRun(blocker.run_id)).ended_at);
  check(Object.values(ended).every((r) => Date.parse(r.started_at) >= blockerEnd), 'none started before the one slot was free');
  const started = Object.entries(ended).sort((x, y) => Date.parse(x[1].started_at) - Date.parse(y[1].started_at) || x[1].started_at.localeCompare(y[1].started_at)).map(([n]) => n);
  eq(started, ['top', 'mid', 'mid_b', 'low_a', 'low_c', 'low_b'], 'claimed by priority, highest first, equal ones oldest first');
});
