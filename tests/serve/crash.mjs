// crash.mjs — serve_crash.sh, in two phases around a `kill -9`.
//   phase1: 20 sessions, one slow streaming run each, each read over SSE;
//           every event received is appended (synchronously) to
//           $T/crash_seen.jsonl, so the file is what clients saw before
//           the kill; $T/crash_ready appears once every run has streamed
//           ≥ 5 events. Then the streams break (the kill) and it exits.
//   phase2: after the restart on the same store: every run is completed,
//           or failed with error run_resumable; every event a client saw
//           is still there with the same seq and the same JSON; seqs have
//           no hole; the run.state_changed the recovery appended comes
//           after the last stored seq; :resume of one run continues it
//           (seq going on) to completed.
// Threading: one event loop.
import fs from 'node:fs';
import path from 'node:path';
import { Client, main, check, eq, must, seqsContiguous, statesOf, ALL, sleep } from './client.mjs';

const T = process.env.T;
const seenFile = path.join(T, 'crash_seen.jsonl');
const idsFile = path.join(T, 'crash_ids.json');
const phase = process.argv[2];
const N = 20;

await main(`serve_crash ${phase}`, async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  if (phase === 'phase1') {
    const runs = await Promise.all(Array.from({ length: N }, (_, i) =>
      a.start({ goal: `CRASH-RUN ${i}: stream slowly` }).then((x) => x.run.run_id)));
    fs.writeFileSync(idsFile, JSON.stringify(runs));
    const counts = new Map(runs.map((id) => [id, 0]));
    let ready = false;
    const fd = fs.openSync(seenFile, 'a');
    const streams = runs.map((id) => a.stream(id, { timeoutMs: 120000, onEvent: (ev) => {
      fs.writeSync(fd, JSON.stringify({ run_id: id, id: ev.id, raw: ev.raw }) + '\n');
      counts.set(id, counts.get(id) + 1);
      if (!ready && [...counts.values()].every((n) => n >= 5)) {
        ready = true;
        fs.writeFileSync(path.join(T, 'crash_ready'), 'ready\n');
      }
    } }).catch((e) => ({ error: String(e) })));
    const results = await Promise.all(streams);
    fs.closeSync(fd);
    const ended = results.filter((r) => r && r.end).length;
    check(ready, `all ${N} runs streamed before the kill`, [...counts.values()]);
    check(ended < N, 'the kill cut the streams (not every stream saw its end)', ended);
    return;
  }

  must(phase === 'phase2', 'phase is phase1 or phase2', phase);
  const runs = JSON.parse(fs.readFileSync(idsFile, 'utf8'));
  const seen = fs.readFileSync(seenFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  console.log(`# clients saw ${seen.length} events of ${runs.length} runs before the kill`);
  let resumable = 0;
  let completed = 0;
  const bad = [];
  const lost = [];
  for (const id of runs) {
    const r = await a.getRun(id);
    if (r.state === 'completed') completed++;
    else if (r.state === 'failed' && r.error && r.error.code === 'run_resumable') resumable++;
    else bad.push(`${id}: ${r.state} ${JSON.stringify(r.error)}`);
    const evs = await a.allEvents(id, { visibility: ALL });
    if (!seqsContiguous(evs)) bad.push(`${id}: seqs ${evs.map((e) => e.seq).join(',')}`);
    const bySeq = new Map(evs.map((e) => [String(e.seq), e]));
    for (const s of seen.filter((x) => x.run_id === id)) {
      const now = bySeq.get(s.id);
      if (!now || JSON.stringify(now) !== JSON.stringify(JSON.parse(s.raw))) lost.push(`${id} seq ${s.id}`);
    }
    if (r.state === 'failed') {
      const last = evs[evs.length - 1];
      const lastSeen = Math.max(0, ...seen.filter((x) => x.run_id === id).map((x) => Number(x.id)));
      if (!(last && last.type === 'run.state_changed' && last.payload.state === 'failed' && last.seq > lastSeen
        && /server stopped/.test(last.payload.reason || '')))
        bad.push(`${id}: last event ${JSON.stringify(last)}`);
    }
  }
  eq(bad, [], `every one of the ${N} runs is completed or failed with run_resumable, seqs without holes, the recovery's run.state_changed(failed, "the server stopped…") last`);
  eq(lost, [], 'every event a client received before the kill is still there, same seq, same JSON');
  check(resumable + completed === N && resumable > 0, `${resumable} resumable, ${completed} completed`, { resumable, completed });

  // :resume continues one of them.
  const one = [];
  for (const id of runs) if ((await a.getRun(id)).state === 'failed') { one.push(id); break; }
  if (one.length) {
    const id = one[0];
    const before = await a.allEvents(id, { visibility: ALL });
    const rs = await a.expect(200, 'POST', `/runs/${id}:resume`, { body: { note: 'RESUME-NOTE: after the crash' } });
    check(['queued', 'running', 'completed'].includes(rs.state), ':resume of a recovered run answers it queued or running', rs.state);
    const end = await a.waitState(id, ['completed', 'failed', 'cancelled'], 60000);
    eq(end.state, 'completed', 'the resumed run completes');
    const after = await a.allEvents(id, { visibility: ALL });
    check(seqsContiguous(after), 'its seq goes on from where the crash left it: no hole, no repeat');
    eq(after.slice(0, before.length), before, 'the events before the resume are unchanged');
    check(statesOf(after.slice(before.length)).pop() === 'completed', 'the resumed part ends with run.state_changed(completed)');
    const again = await a.post(`/runs/${id}:resume`, {});
    check(again.status === 409, 'a second :resume of the completed run is 409', again.status);
  }
  await sleep(0);
});
