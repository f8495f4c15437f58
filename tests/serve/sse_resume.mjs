// sse_resume.mjs — serve_sse_resume.sh: one long run (~900 token deltas,
// dripped) read by a client that hangs up at random points — after a
// random number of whole events, or mid-event after a random number of
// bytes — and reconnects with Last-Event-ID (every third time with
// ?after= instead), at least 100 times. The union of what it received
// must be every event exactly once, in order, equal to the events page.
// Also: keep-alive comments come at --keepalive-ms, and a stream of an
// ended run sends the rest and `event: end` at once.
// Threading: one event loop; one connection at a time.
import { Client, main, check, eq, seqsContiguous, seqsIncreasing, ALL } from './client.mjs';

await main('serve_sse_resume', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  const RECONNECTS = Number(process.env.SSE_RECONNECTS || 100);
  let seed = Number(process.env.SSE_SEED || Date.now() % 100000);
  console.log(`# random seed ${seed} (SSE_SEED=${seed} to replay)`);
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return Math.floor(seed / 65536) % n; };

  const { run } = await a.start({ goal: 'SSE-LONG: a long streamed answer' });
  const got = [];
  let last = null;
  let connections = 0;
  let midEvent = 0;
  let endState = null;
  let repeats = 0;
  let keepalives = 0;
  while (true) {
    const opts = { timeoutMs: 30000 };
    if (last !== null) {
      if (connections % 3 === 2) opts.after = last; else opts.lastEventId = last;
    }
    const hangUp = connections < RECONNECTS * 2;
    if (hangUp) {
      if (rnd(2)) opts.stopAfterEvents = 1 + rnd(12);
      else { opts.stopAfterBytes = 40 + rnd(1500); midEvent++; }
    }
    const r = await a.stream(run.run_id, opts);
    connections++;
    if (r.status !== 200) throw new Error(`reconnect ${connections}: status ${r.status}: ${r.text}`);
    keepalives += r.comments;
    for (const ev of r.events) {
      const seq = Number(ev.id);
      if (last !== null && seq <= last) repeats++;
      else { got.push(ev.data); last = seq; }
    }
    if (r.end) { endState = r.end.state; if (connections > RECONNECTS) break; }
    if (connections > RECONNECTS * 4) throw new Error(`no end after ${connections} connections`);
    if (r.end && !hangUp) break;
  }
  console.log(`# ${connections} connections (${midEvent} cut mid-event), ${got.length} events, ${keepalives} keep-alives`);
  check(connections > RECONNECTS, `the client disconnected and reconnected at least ${RECONNECTS} times`, connections);
  eq(repeats, 0, 'no event came twice across the reconnections');
  check(seqsIncreasing(got), 'the union of the received events is in seq order, each once', got.map((e) => e.seq).slice(0, 50));
  const every = await a.allEvents(run.run_id, { visibility: ALL });
  check(seqsContiguous(every), 'over every visibility the run has seq 1..n without a hole');
  eq(got, every.filter((e) => e.visibility !== 'audit'), 'the union is every user and system event of the run: none lost');
  eq(endState, 'completed', 'the stream ended with event: end, state completed');
  const page = await a.allEvents(run.run_id);
  eq(got.length, page.length, 'as many events as the events page holds');
  eq(got, page, 'and the same events, byte for byte (as JSON), as GET /runs/{id}/events');
  const deltas = got.filter((e) => e.type === 'token.delta');
  check(deltas.length >= 800, 'the long run streamed hundreds of token deltas', deltas.length);
  const text = deltas.map((e) => e.payload.text).join('');
  check(text.includes('The quick brown fox jumps over the lazy dog; The quick'), 'the deltas, joined, are the scripted text');

  // An ended run: a fresh stream from the middle gives the rest at once.
  const mid = Math.floor(page.length / 2);
  const t0 = Date.now();
  const rest = await a.stream(run.run_id, { lastEventId: mid, timeoutMs: 10000 });
  eq(rest.events.map((e) => e.data), page.slice(mid), 'Last-Event-ID: N on an ended run gives every event after N');
  check(rest.end && rest.end.state === 'completed' && Date.now() - t0 < 5000, 'then event: end, at once');
  const none = await a.stream(run.run_id, { lastEventId: page.length, timeoutMs: 10000 });
  eq([none.events.length, none.end && none.end.state], [0, 'completed'], 'Last-Event-ID at the last seq: nothing but event: end');

  // Keep-alive comments (the server runs with --keepalive-ms 200): a run
  // waiting for approval sends none of its own events for a while.
  const w = await a.start({ goal: 'SSE-WAIT: remove tmp' });
  await a.pendingApproval(w.run.run_id);
  const quiet = await a.stream(w.run.run_id, { timeoutMs: 1200 });
  check(quiet.comments >= 3, 'a quiet stream gets `: keep-alive` comments every keepalive-ms (200 ms)', quiet.comments);
  await a.expect(200, 'POST', `/runs/${w.run.run_id}:cancel`, {});

  // The visibility filter on the stream: audit needs an audit token.
  const bob = new Client(process.env.TOKEN_A2, undefined, 'bob');
  const denied = await bob.stream(run.run_id, { visibility: 'audit' });
  check(denied.status === 400 && denied.json && denied.json.error.code === 'invalid_request',
    'a stream with visibility=audit for a token without audit: 400 invalid_request', [denied.status, denied.text]);
  const user = await a.stream(run.run_id, { visibility: 'user' });
  check(user.events.length > 0 && user.events.every((e) => e.data.visibility === 'user'), 'visibility=user streams only user events');
});
