// priority.mjs — pg_priority.sh's checks: one worker with one slot, held
// by a slow run while six more are queued with priorities; they start in
// priority order (highest first), equal ones oldest first; a run that
// gives no priority takes its task's (POST /tasks priority), one that
// gives its own keeps it.
// Threading: one event loop.
import { Client, main, check, eq, checkError, waitFor } from './client.mjs';

await main('pg_priority', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  const make = async (goal, priority, taskPriority) => {
    const s = await a.session({ project_id: 'p1', app_id: 'e2e', user_id: 'u_prio' });
    const t = await a.task({ session_id: s.session_id, goal, agent_profile: 'coding_default',
      ...(taskPriority === undefined ? {} : { priority: taskPriority }) });
    eq(t.priority, taskPriority ?? 0, 'the task says its priority (0 when not given)');
    return a.run(priority === undefined ? { task_id: t.task_id } : { task_id: t.task_id, priority });
  };
  const blocker = await make('CLUSTER-RUN blocker: CMD{sleep 4}END');
  await waitFor(async () => (await a.getRun(blocker.run_id)).state === 'running', 'the blocker runs', 30000);
  const s = await a.session({ project_id: 'p1', app_id: 'e2e', user_id: 'u_prio' });
  const t = await a.task({ session_id: s.session_id, goal: 'CLUSTER-RUN bad', agent_profile: 'coding_default' });
  checkError(await a.post('/runs', { task_id: t.task_id, priority: 5000 }), 400, 'invalid_request', 'a priority above 1000 is refused');
  checkError(await a.post('/runs', { task_id: t.task_id, priority: 'high' }), 400, 'invalid_request', 'a priority that is not an integer is refused');
  checkError(await a.post('/tasks', { session_id: s.session_id, goal: 'x', priority: -1001 }), 400, 'invalid_request', 'a task priority below -1000 is refused');
  checkError(await a.post('/tasks', { session_id: s.session_id, goal: 'x', priority: 2.5 }), 400, 'invalid_request', 'a task priority that is not an integer is refused');
  // [name, the run's priority, its task's]
  const order = [['low_a'], ['low_b', -1], ['mid', 3], ['top', 10], ['task_low', -2, 50], ['low_c'],
    ['task_top', undefined, 20], ['mid_b', 3]];
  const runs = {};
  for (const [name, p, tp] of order) runs[name] = await make(`CLUSTER-RUN ${name}: CMD{true}END`, p, tp);
  eq([runs.top.priority, runs.low_a.priority, runs.low_b.priority, runs.task_top.priority, runs.task_low.priority],
    [10, 0, -1, 20, -2], "a run says its priority (its own, else its task's, else 0)");
  const ended = {};
  for (const [name] of order) ended[name] = await a.waitState(runs[name].run_id, ['completed', 'failed', 'cancelled'], 60000);
  check(Object.values(ended).every((r) => r.state === 'completed'), 'every run completed', Object.values(ended).map((r) => r.state));
  const blockerEnd = Date.parse((await a.getRun(blocker.run_id)).ended_at);
  check(Object.values(ended).every((r) => Date.parse(r.started_at) >= blockerEnd), 'none started before the one slot was free');
  const started = Object.entries(ended).sort((x, y) => Date.parse(x[1].started_at) - Date.parse(y[1].started_at) || x[1].started_at.localeCompare(y[1].started_at)).map(([n]) => n);
  eq(started, ['task_top', 'top', 'mid', 'mid_b', 'low_a', 'low_c', 'low_b', 'task_low'], 'claimed by priority (a task\'s for its runs that give none), highest first, equal ones oldest first');
});
