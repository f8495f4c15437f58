// client.mjs — the e2e scenarios' client of loom-serve (tests/e2e/serve_*.sh).
//
// Owns: HTTP requests with a bearer token and JSON bodies; an SSE reader
// that resumes with Last-Event-ID and can hang up at a chosen event or
// byte; the check that EVERY response matches the server's own
// /openapi.json (route, method, status, JSON schema) — a mismatch fails the
// scenario, because the "Done when" asks that every response in the
// e2e tests validates against the document; and the assertion helpers that
// print `ok - …` / `not ok - …` lines like tests/e2e/_lib.sh.
//
// Threading: Node's one event loop; a Client may have many requests and
// streams in flight at once (the scenarios start runs concurrently).
//
// Environment: SERVE_URL (http://127.0.0.1:PORT), LOOM_SRC (the checkout,
// to find ajv in tests/validate/node_modules or tests/mcp/node_modules).
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const SRC = process.env.LOOM_SRC || path.resolve(here, '../..');
const require = createRequire(import.meta.url);

// ajv comes from the http helper's tests/validate (its openapi_check.mjs
// uses the same one) or, failing that, the MCP suite's node_modules.
function requireFrom(name) {
  const paths = [path.join(SRC, 'tests/validate'), path.join(SRC, 'tests/mcp')];
  return require(require.resolve(name, { paths }));
}

// ---- assertions -----------------------------------------------------------

let passed = 0;
let failed = 0;
export function ok(what) { passed++; console.log(`ok - ${what}`); }
export function notOk(what) { failed++; console.error(`not ok - ${what}`); }
/** A sentence that holds, or a failure that says what was seen instead. */
export function check(cond, what, seen) {
  if (cond) ok(what); else notOk(seen === undefined ? what : `${what} (saw: ${show(seen)})`);
  return !!cond;
}
/** As check, but the scenario cannot go on without it: throws. */
export function must(cond, what, seen) {
  if (!check(cond, what, seen)) throw new Error(`cannot go on: ${what}`);
}
export function eq(a, b, what) { return check(deepEq(a, b), what, { got: a, want: b }); }
export function show(v) {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s && s.length > 1500 ? s.slice(0, 1500) + '…' : s;
}
export function deepEq(a, b) { return JSON.stringify(a) === JSON.stringify(b); }
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls fn (async, returns a truthy value when done) every stepMs. */
export async function waitFor(fn, what, timeoutMs = 20000, stepMs = 50) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await sleep(stepMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
}

/** Runs a scenario body; prints the tally; the exit status says pass/fail. */
export async function main(name, body) {
  try {
    await body();
  } catch (e) {
    notOk(`${name}: ${e && e.stack ? e.stack : e}`);
  }
  console.log(`${name}: ${passed} passed, ${failed} failed, ${validated} responses validated`);
  process.exit(failed ? 1 : 0);
}

// ---- the OpenAPI document -------------------------------------------------

let spec = null;
let ajv = null;
let routes = [];
let validated = 0;
const compiled = new Map();

function templateRegex(tpl) {
  // {param} is one path segment; ids never hold '/' or ':' (the :action
  // suffix follows the last one).
  const parts = tpl.split(/(\{[^}]+\})/).map((p) =>
    p.startsWith('{') ? '([^/:]+)' : p.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp('^' + parts.join('') + '$');
}

/** Fetches /openapi.json once (no token) and prepares the validator. */
export async function loadSpec(base = process.env.SERVE_URL) {
  if (spec) return spec;
  const r = await rawRequest(base, 'GET', '/openapi.json', {});
  if (r.status !== 200) throw new Error(`GET /openapi.json answered ${r.status}: ${r.text.slice(0, 300)}`);
  spec = JSON.parse(r.text);
  if (typeof spec.openapi !== 'string' || !spec.openapi.startsWith('3.1'))
    throw new Error(`/openapi.json is not OpenAPI 3.1 (openapi: ${spec.openapi})`);
  const Ajv2020 = requireFrom('ajv/dist/2020').default;
  const addFormats = requireFrom('ajv-formats').default || requireFrom('ajv-formats');
  // strict off: OpenAPI 3.1 schemas may carry example/discriminator/xml.
  ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema({ ...spec, $id: 'openapi.json' });
  routes = Object.keys(spec.paths || {}).map((tpl) => ({ tpl, re: templateRegex(tpl) }));
  // Literal segments beat parameters: the longest literal text first.
  routes.sort((a, b) => b.tpl.replace(/\{[^}]+\}/g, '').length - a.tpl.replace(/\{[^}]+\}/g, '').length);
  return spec;
}

export function specPaths() { return spec ? Object.keys(spec.paths) : []; }
export function specOps() {
  const out = [];
  for (const [tpl, item] of Object.entries(spec.paths))
    for (const m of ['get', 'post', 'put', 'patch', 'delete'])
      if (item[m]) out.push({ tpl, method: m.toUpperCase(), op: item[m] });
  return out;
}

function deref(obj) {
  let o = obj;
  for (let i = 0; o && o.$ref && i < 10; i++) {
    const ptr = o.$ref.replace(/^#\//, '').split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    o = ptr.reduce((acc, k) => (acc ? acc[k] : undefined), spec);
  }
  return o;
}

function rewriteRefs(v) {
  if (Array.isArray(v)) return v.map(rewriteRefs);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v))
      o[k] = k === '$ref' && typeof x === 'string' && x.startsWith('#/') ? 'openapi.json' + x : rewriteRefs(x);
    return o;
  }
  return v;
}

function validatorFor(key, schema) {
  if (!compiled.has(key)) compiled.set(key, ajv.compile(rewriteRefs(schema)));
  return compiled.get(key);
}

/** The schema validator of a component (e.g. "Event"), or null. */
export function componentValidator(name) {
  const s = spec && spec.components && spec.components.schemas && spec.components.schemas[name];
  return s ? validatorFor(`#component:${name}`, { $ref: `#/components/schemas/${name}` }) : null;
}

/** Throws unless (method, path, status, body) is what the document says. */
export function validateResponse(method, pathname, r) {
  if (!spec) return;
  const route = routes.find((x) => x.re.test(pathname));
  const where = `${method} ${pathname} → ${r.status}`;
  if (!route) throw new Error(`${where}: no path of /openapi.json matches ${pathname}`);
  const op = spec.paths[route.tpl][method.toLowerCase()];
  // A wrong method is answered 405 by the router: the document need not
  // list it, but the body must still be the error envelope.
  if (!op) {
    if (r.status === 405 || r.status === 404) return validateEnvelope(where, r);
    throw new Error(`${where}: /openapi.json has no ${method} on ${route.tpl}`);
  }
  const s = String(r.status);
  const resp = deref(op.responses[s] || op.responses[`${s[0]}XX`] || op.responses.default);
  if (!resp) throw new Error(`${where}: ${route.tpl} documents no ${s} response (has ${Object.keys(op.responses)})`);
  const ct = (r.headers['content-type'] || '').toLowerCase();
  const content = resp.content || {};
  const jsonKey = Object.keys(content).find((k) => k.startsWith('application/json'));
  if (ct.startsWith('application/json')) {
    if (!jsonKey) {
      // Artifact content may be JSON (result.json) under a wildcard entry.
      if (Object.keys(content).some((k) => k.includes('*'))) return;
      throw new Error(`${where}: answered JSON, but the document has no JSON body for it (${Object.keys(content)})`);
    }
    let body;
    try { body = JSON.parse(r.text); } catch (e) { throw new Error(`${where}: the body is not JSON: ${e.message}`); }
    const schema = content[jsonKey].schema;
    if (!schema) return;
    const v = validatorFor(`${route.tpl} ${method} ${s}`, schema);
    validated++;
    if (!v(body))
      throw new Error(`${where}: the body does not match /openapi.json: ${ajv.errorsText(v.errors, { separator: '; ' })}\nbody: ${show(body)}`);
  } else if (ct.startsWith('text/event-stream')) {
    if (!Object.keys(content).some((k) => k.startsWith('text/event-stream')))
      throw new Error(`${where}: answered an event stream, but the document does not say so`);
    validated++;
  } else if (!Object.keys(content).length && r.text.length) {
    throw new Error(`${where}: a ${ct || 'typeless'} body the document does not describe`);
  } else {
    validated++;
  }
}

function validateEnvelope(where, r) {
  const v = componentValidator('Error') || componentValidator('ErrorEnvelope');
  if (!v) return;
  validated++;
  let body;
  try { body = JSON.parse(r.text); } catch { throw new Error(`${where}: an error that is not JSON: ${r.text.slice(0, 200)}`); }
  if (!v(body)) throw new Error(`${where}: the error envelope does not match /openapi.json: ${ajv.errorsText(v.errors)}`);
}

/* A response that does not match the document is a failure of the
 * scenario; it is counted (once per kind, so one wrong schema does not
 * print a hundred lines) and the scenario goes on, to show what else holds. */
const mismatches = new Set();
function mismatch(e) {
  const msg = String(e.message || e);
  const key = msg.split('\n')[0].replace(/(sess|task|run|apv|art|evp|cit|whd)_[0-9a-z]+/g, '$1_*');
  if (mismatches.has(key)) { failed++; return; }
  mismatches.add(key);
  notOk(`the answer matches /openapi.json: ${msg}`);
}

// ---- HTTP -----------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function rawRequest(base, method, pathWithQuery, { body, headers = {}, token }) {
  const u = new URL(pathWithQuery, base);
  const h = { accept: 'application/json', ...headers };
  if (token) h.authorization = `Bearer ${token}`;
  let data;
  if (body !== undefined) {
    data = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    h['content-type'] = h['content-type'] || 'application/json';
    h['content-length'] = data.length;
  }
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method,
      headers: h, agent }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const buf = Buffer.concat(chunks);
        const text = buf.toString('utf8');
        let json = null;
        if ((res.headers['content-type'] || '').startsWith('application/json')) {
          try { json = JSON.parse(text); } catch { json = null; }
        }
        resolve({ status: res.statusCode, headers: res.headers, text, json, buf });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.setTimeout(360000, () => req.destroy(new Error(`${method} ${pathWithQuery}: no answer in 360 s`)));
    if (data) req.write(data);
    req.end();
  });
}

function withQuery(p, query) {
  if (!query) return p;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) q.set(k, String(v));
  const s = q.toString();
  return s ? `${p}${p.includes('?') ? '&' : '?'}${s}` : p;
}

export class Client {
  /** token may be null (no Authorization header). */
  constructor(token, base = process.env.SERVE_URL, name = 'client') {
    this.token = token;
    this.base = base;
    this.name = name;
  }

  /** Any request; validates the answer against /openapi.json (throws on a
   * mismatch). opts: {body, query, headers, token (override; null: none)}. */
  async request(method, p, opts = {}) {
    await loadSpec(this.base);
    const token = 'token' in opts ? opts.token : this.token;
    const full = withQuery(p, opts.query);
    const r = await rawRequest(this.base, method, full, { ...opts, token });
    try {
      validateResponse(method, new URL(full, this.base).pathname, r);
    } catch (e) {
      mismatch(e);
    }
    return r;
  }
  get(p, query, opts = {}) { return this.request('GET', p, { ...opts, query }); }
  post(p, body, opts = {}) { return this.request('POST', p, { ...opts, body: body === undefined ? {} : body }); }

  /** As request, but the status must be `want`: the JSON body, or throws. */
  async expect(want, method, p, opts = {}) {
    const r = await this.request(method, p, opts);
    if (r.status !== want)
      throw new Error(`${this.name}: ${method} ${p} answered ${r.status}, not ${want}: ${r.text.slice(0, 600)}`);
    return r.json ?? r.text;
  }

  // The objects, each a thin wrapper that must succeed.
  session(body = {}) { return this.expect(201, 'POST', '/sessions', { body }); }
  task(body) { return this.expect(201, 'POST', '/tasks', { body }); }
  run(body, query) { return this.expect(201, 'POST', '/runs', { body, query }); }
  getRun(id) { return this.expect(200, 'GET', `/runs/${id}`); }
  approval(id) { return this.expect(200, 'GET', `/approvals/${id}`); }

  /** session → task → run in one go; returns {session, task, run}. */
  async start({ project_id = 'p1', goal, agent_profile = 'coding_default', policy_id, strategy, note,
    knowledge_sources, session } = {}) {
    const s = session || await this.session({ project_id, app_id: 'e2e', user_id: 'u_e2e' });
    const tb = { session_id: s.session_id, goal, agent_profile };
    if (policy_id) tb.policy_id = policy_id;
    if (knowledge_sources) tb.knowledge_sources = knowledge_sources;
    const t = await this.task(tb);
    const rb = { task_id: t.task_id };
    if (strategy) rb.multitask_strategy = strategy;
    if (note) rb.note = note;
    const r = await this.run(rb);
    return { session: s, task: t, run: r };
  }

  /** Polls GET /runs/{id} until its state is one of states. */
  async waitState(id, states, timeoutMs = 30000) {
    const want = Array.isArray(states) ? states : [states];
    let last;
    try {
      return await waitFor(async () => {
        last = await this.getRun(id);
        return want.includes(last.state) ? last : null;
      }, `run ${id} in ${want}`, timeoutMs, 50);
    } catch (e) {
      throw new Error(`${e.message}; last seen: ${show(last)}`);
    }
  }

  /** Every event of a run through the events pages (after=, limit=). */
  async allEvents(id, { visibility, limit = 200 } = {}) {
    const items = [];
    let after = 0;
    for (let i = 0; i < 10000; i++) {
      const page = await this.expect(200, 'GET', `/runs/${id}/events`, { query: { after, limit, visibility } });
      items.push(...page.items);
      if (!page.has_more) break;
      if (page.next_after <= after) throw new Error(`events page of ${id}: next_after ${page.next_after} did not move past ${after}`);
      after = page.next_after;
    }
    return items;
  }

  /** Waits for the first approval of a run with status pending. */
  async pendingApproval(runId, timeoutMs = 30000) {
    return waitFor(async () => {
      const l = await this.expect(200, 'GET', '/approvals', { query: { run_id: runId, status: 'pending' } });
      return l.items[0] || null;
    }, `a pending approval on ${runId}`, timeoutMs);
  }

  /** SSE: GET /runs/{id}/stream. opts: {lastEventId, after, visibility,
   * stopAfterEvents (hang up once that many events arrived), stopAfterBytes
   * (hang up once that many body bytes arrived, mid-event if so),
   * timeoutMs, onEvent(ev)}. Resolves {status, headers, events: [{id,
   * event, data, raw}], end: data of `event: end` | null, comments,
   * hungUp, bytes}. Only whole events (ended by a blank line) count. */
  stream(runId, opts = {}) {
    const u = new URL(withQuery(`/runs/${runId}/stream`, { after: opts.after, visibility: opts.visibility }), this.base);
    const headers = { accept: 'text/event-stream' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (opts.lastEventId !== undefined && opts.lastEventId !== null) headers['last-event-id'] = String(opts.lastEventId);
    return new Promise((resolve, reject) => {
      const out = { status: 0, headers: {}, events: [], end: null, comments: 0, hungUp: false, bytes: 0 };
      let buf = '';
      let cur = { id: null, event: null, data: [] };
      let done = false;
      let timer = null;
      const finish = (err) => {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        if (err) reject(err); else resolve(out);
      };
      const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, headers }, (res) => {
        out.status = res.statusCode;
        out.headers = res.headers;
        if (res.statusCode === 200) {
          try { validateResponse('GET', u.pathname, { status: res.statusCode, headers: res.headers, text: '' }); }
          catch (e) { mismatch(e); }
        }
        if (res.statusCode !== 200) {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            out.text = Buffer.concat(chunks).toString('utf8');
            try { validateResponse('GET', u.pathname, { status: res.statusCode, headers: res.headers, text: out.text }); }
            catch (e) { mismatch(e); }
            try { out.json = JSON.parse(out.text); } catch { out.json = null; }
            finish();
          });
          return;
        }
        const evSchema = componentValidator('Event');
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          if (done) return;
          let piece = chunk;
          if (opts.stopAfterBytes !== undefined) {
            const room = opts.stopAfterBytes - out.bytes;
            if (Buffer.byteLength(piece) > room) piece = Buffer.from(piece).subarray(0, Math.max(room, 0)).toString('utf8');
          }
          out.bytes += Buffer.byteLength(piece);
          buf += piece;
          let nl;
          while ((nl = buf.indexOf('\n')) >= 0) {
            let line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.endsWith('\r')) line = line.slice(0, -1);
            if (line === '') {
              if (cur.data.length || cur.event) {
                const raw = cur.data.join('\n');
                let data = raw;
                try { data = JSON.parse(raw); } catch { /* kept as text; checked below */ }
                const ev = { id: cur.id, event: cur.event || 'message', data, raw };
                if (ev.event === 'end') {
                  out.end = data;
                } else {
                  if (typeof data !== 'object') return finish(new Error(`SSE ${runId}: an event whose data is not JSON: ${raw.slice(0, 200)}`));
                  if (evSchema && !evSchema(data))
                    mismatch(new Error(`SSE ${runId}: an event does not match the Event schema: ${ajv.errorsText(evSchema.errors)}\n${raw.slice(0, 400)}`));
                  validated++;
                  out.events.push(ev);
                  if (opts.onEvent) opts.onEvent(ev);
                }
              }
              cur = { id: null, event: null, data: [] };
              if (opts.stopAfterEvents !== undefined && out.events.length >= opts.stopAfterEvents) {
                out.hungUp = true;
                req.destroy();
                return finish();
              }
              continue;
            }
            if (line.startsWith(':')) { out.comments++; continue; }
            const c = line.indexOf(':');
            const field = c < 0 ? line : line.slice(0, c);
            let value = c < 0 ? '' : line.slice(c + 1);
            if (value.startsWith(' ')) value = value.slice(1);
            if (field === 'id') cur.id = value;
            else if (field === 'event') cur.event = value;
            else if (field === 'data') cur.data.push(value);
          }
          if (opts.stopAfterBytes !== undefined && out.bytes >= opts.stopAfterBytes) {
            out.hungUp = true;
            req.destroy();
            finish();
          }
        });
        res.on('end', () => finish());
        res.on('error', (e) => (out.hungUp ? finish() : finish(e)));
        res.on('close', () => finish());
      });
      req.on('error', (e) => (out.hungUp || done ? finish() : finish(e)));
      if (opts.timeoutMs) timer = setTimeout(() => { out.hungUp = true; out.timedOut = true; req.destroy(); finish(); }, opts.timeoutMs);
      req.end();
    });
  }
}

/** The error code of an envelope answer (or null). */
export function codeOf(r) { return r && r.json && r.json.error ? r.json.error.code : null; }

/** Checks an error answer: status and code, and a well-formed envelope. */
export function checkError(r, status, code, what) {
  const e = r.json && r.json.error;
  return check(r.status === status && e && e.code === code && typeof e.message === 'string'
    && typeof e.retryable === 'boolean' && 'run_id' in e,
  `${what}: ${status} ${code}`, { status: r.status, body: r.text.slice(0, 400) });
}

/** The events of a list whose type is t. */
export const ofType = (events, t) => events.filter((e) => (e.data ? e.data.type : e.type) === t);
/** run.state_changed events' new states, in order (server's own: {from, state}). */
export function statesOf(events) {
  return events.map((e) => e.data || e)
    .filter((e) => e.type === 'run.state_changed' && e.payload && 'from' in e.payload)
    .map((e) => e.payload.state);
}
/** Every visibility: seqs are the run's own counter over all of them. */
export const ALL = 'user,system,audit';
/** Seqs only grow (a filtered view skips the seqs of the other visibilities). */
export function seqsIncreasing(events) {
  const s = events.map((e) => (e.data ? e.data.seq : e.seq));
  return s.every((x, i) => i === 0 || x > s[i - 1]);
}
/** Seqs are 1..n with no hole and no repeat (check it on an ALL view). */
export function seqsContiguous(events, from = 1) {
  return events.every((e, i) => (e.data ? e.data.seq : e.seq) === from + i);
}
