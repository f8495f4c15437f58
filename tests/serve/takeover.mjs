// takeover.mjs — pg_takeover.sh's checks, in phases around what the shell
// does to the workers. Each run's one reply asks for two Bash calls: ONE
// appends "one" to WHAT_calls.txt, sleeps (30 s for kill, 8 s for stall:
// the shell stops the worker meanwhile), then appends "done1"; TWO
// appends "two".
//   start WHAT:  makes the run (its id in $T/WHAT.id) and waits until ONE
//                runs (its "one" is in the file).
//   kill:        after the holder was SIGKILLed mid-ONE and another worker
//                took the run over: both calls are recorded as interrupted,
//                ONE from its stored tool.started, TWO (asked for, never
//                started: only the session shows it) from the session's
//                records; neither ran again, TWO never ran, the model was
//                told, the run completed once with its events 1..n.
//   stall:       after the holder was SIGSTOPped past its lease's expiry
//                (no one else claimed it) with ONE ending meanwhile, then
//                SIGCONTed: TWO never started (the lease is checked right
//                before each call, and an expired one is lost), and the run
//                went on from its session once, completed, events 1..n.
//   long:        after a claim of the holder waited (the shell held the
//                claim's lock) for longer than two leases while ONE slept:
//                both calls ran once, nothing was interrupted or reclaimed.
// Threading: one event loop.
import fs from 'node:fs';
import path from 'node:path';
import { Client, main, check, eq, seqsContiguous, ALL, waitFor } from './client.mjs';

const T = process.env.T;
const WS = path.join(T, 'ws', 'acme-p1');
const [phase, what] = process.argv.slice(2);
const a = new Client(process.env.TOKEN_A, process.env.SERVE_URL, 'A');
const lines = (f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n').filter((l) => l) : []);
const callsFile = (w) => path.join(WS, `${w}_calls.txt`);

async function ended(w) {
  const id = fs.readFileSync(path.join(T, `${w}.id`), 'utf8');
  const r = await a.waitState(id, ['completed', 'failed', 'cancelled'], 90000);
  const evs = await a.allEvents(id, { visibility: ALL });
  console.log(`# ${w}: ${evs.map((e) => `${e.seq}:${e.type}${e.payload.reason ? `(${e.payload.reason})` : ''}`).join(' ')}`);
  eq(r.state, 'completed', `${w}: the run completed`);
  eq(evs.filter((e) => e.type === 'run.completed').length, 1, `${w}: one run.completed`);
  check(seqsContiguous(evs), `${w}: its events are stored once, 1..n`, evs.map((e) => e.seq));
  if (w !== 'long') check(/not repeating/.test(r.summary || ''), `${w}: the model was told its calls were interrupted`, r.summary);
  return { id, r, evs };
}

await main(`pg_takeover ${phase} ${what || ''}`, async () => {
  if (phase === 'start') {
    // (The policy allows echo, sleep and true alone: no loop on a file.)
    const goal = `TAKEOVER-RUN ${what}: ONE{echo one >> ${what}_calls.txt && sleep ${{ kill: 30, stall: 8, long: 6 }[what]} && ` +
      `echo done1 >> ${what}_calls.txt}END TWO{echo two >> ${what}_calls.txt}END`;
    const { run } = await a.start({ goal });
    fs.writeFileSync(path.join(T, `${what}.id`), run.run_id);
    await waitFor(async () => lines(callsFile(what)).includes('one'), `${what}: the first call runs`, 60000);
    return;
  }
  if (phase === 'kill') {
    const { evs } = await ended('kill');
    const started = evs.filter((e) => e.type === 'tool.started').map((e) => e.payload.call_id);
    const interrupted = evs.filter((e) => e.type === 'tool.interrupted').map((e) => e.payload.call_id);
    eq(interrupted.length, 2, 'kill: both calls of the reply are recorded as interrupted', interrupted);
    eq(new Set(interrupted).size, 2, 'kill: once each');
    check(interrupted.includes(started[0]), 'kill: the one in flight (its tool.started stored) among them', { started, interrupted });
    check(interrupted.some((id) => !started.includes(id)), 'kill: and the one only the session showed (asked for, never started)', { started, interrupted });
    eq(lines(callsFile('kill')).filter((l) => l !== 'done1'), ['one'], 'kill: neither call ran again, the second never ran');
    return;
  }
  if (phase === 'stall') {
    const { evs } = await ended('stall');
    eq(lines(callsFile('stall')), ['one', 'done1'], 'stall: the second call never started on the worker that woke past its lease');
    check(evs.some((e) => e.type === 'tool.interrupted'), 'stall: the run went on elsewhere than its lost turn, with its calls recorded as interrupted');
    return;
  }
  if (phase === 'long') {
    const { r, evs } = await ended('long');
    eq(lines(callsFile('long')), ['one', 'done1', 'two'], 'long: both calls ran, once each');
    eq(evs.filter((e) => e.type === 'tool.interrupted' || (e.type === 'run.state_changed' && /reclaimed/.test(e.payload.reason || ''))).length, 0,
      'long: nothing was interrupted or reclaimed');
    check(/Both commands ran/.test(r.summary || ''), 'long: the model saw both results', r.summary);
    return;
  }
  throw new Error(`unknown phase ${phase}`);
});
