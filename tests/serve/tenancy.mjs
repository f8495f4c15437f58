// tenancy.mjs — serve_tenancy.sh: tenant isolation (seed 000 §10.9).
// Tenant A (acme) makes a session, task, a completed run with a patch, a
// run waiting for approval, a policy denial; tenant B (globex, an admin
// with audit) then tries EVERY operation of /openapi.json's paths —
// enumerated from the document, {params} filled with A's ids — and never
// sees A's data: 404 resource_not_found for A's objects, empty listings,
// no A id anywhere in any answer, A's objects unchanged afterwards. No
// token (or an unknown one): 401 everywhere but /healthz and
// /openapi.json. A project-bound token: project_scope_denied on the other
// project (artifact_scope_denied for artifacts). Audit visibility without
// an audit token: 400. A viewer may not create runs.
// Threading: one event loop.
import { Client, main, check, eq, checkError, specOps, ofType, show } from './client.mjs';

await main('serve_tenancy', async () => {
  const a = new Client(process.env.TOKEN_A, undefined, 'A');
  const b = new Client(process.env.TOKEN_B, undefined, 'B');
  const anon = new Client(null, undefined, 'no token');
  const wrong = new Client('tok-nobody-knows-this', undefined, 'unknown token');
  const p1 = new Client(process.env.TOKEN_AP1, undefined, 'acme p1 member');
  const viewer = new Client(process.env.TOKEN_AV, undefined, 'acme viewer');

  // --- A's objects ----------------------------------------------------------
  const art = await a.start({ goal: 'TEN-ART: write the tenant file' });
  const artEnd = await a.waitState(art.run.run_id, ['completed', 'failed']);
  eq(artEnd.state, 'completed', "A's writing run completes");
  const artifacts = (await a.expect(200, 'GET', `/runs/${art.run.run_id}/artifacts`)).items;
  check(artifacts.some((x) => x.name === 'patch.diff'), 'A has a patch artifact');
  const pack = await a.expect(200, 'POST', '/knowledge/search', { body: { query: 'deploy rollback', knowledge_sources: ['repo_docs'] } });
  const pol = await a.start({ goal: 'TEN-POL: fetch with curl', policy_id: 'policy_no_curl' });
  await a.waitState(pol.run.run_id, ['completed', 'failed', 'blocked_by_policy']);
  const apvRun = await a.start({ goal: 'TEN-APV: remove dist' });
  const apv = await a.pendingApproval(apvRun.run.run_id);
  const ids = {
    session: apvRun.session.session_id, task: apvRun.task.task_id, run: apvRun.run.run_id,
    approval: apv.approval_id, artRun: art.run.run_id, artifact: 'patch.diff',
    profile: 'coding_default', policy: 'policy_safe_default', source: 'repo_docs',
  };
  const secrets = [ids.session, ids.task, ids.run, ids.approval, art.session.session_id, art.task.task_id,
    art.run.run_id, pol.run.run_id, pack.evidence_pack_id, ...artifacts.map((x) => x.artifact_id), 'secret of acme'];

  // --- B tries every operation of the document ----------------------------
  const ops = specOps();
  check(ops.length >= 25, `/openapi.json lists the routes (${ops.length} operations)`, ops.map((o) => `${o.method} ${o.tpl}`));
  // The routes open to everyone: the page of the run console and the A2A
  // agent card hold nothing of any tenant's.
  const OPEN = new Set(['/healthz', '/openapi.json', '/', '/console/{name}', '/.well-known/agent-card.json']);
  const fill = (tpl, runKey = 'run') => tpl === '/console/{name}' ? '/console/console.js' : tpl.replace(/\{([^}]+)\}/g, (_, name) => {
    const n = name.toLowerCase();
    const base = tpl.split('/')[1];
    if (n.includes('name')) return ids.artifact;
    if (n.includes('session')) return ids.session;
    if (n.includes('task')) return ids.task;
    if (n.includes('run')) return ids[runKey];
    if (n.includes('approval')) return ids.approval;
    if (n.includes('profile')) return ids.profile;
    if (n.includes('polic')) return ids.policy;
    if (n.includes('source') || n.includes('knowledge')) return ids.source;
    return { sessions: ids.session, tasks: ids.task, runs: ids[runKey], approvals: ids.approval,
      profiles: ids.profile, policies: ids.policy, 'knowledge-sources': ids.source }[base] || 'x';
  });
  const bodyFor = (tpl) => {
    if (tpl === '/a2a') return { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: ids.run } };
    if (tpl.endsWith(':input')) return { text: 'TEN-B: an answer' };
    if (tpl === '/tasks') return { session_id: ids.session, goal: 'TEN-B: steal', agent_profile: 'coding_default' };
    if (tpl === '/runs') return { task_id: ids.task };
    if (tpl === '/sessions') return { project_id: 'main' };
    if (tpl === '/knowledge/search') return { query: 'deploy rollback', knowledge_sources: ['repo_docs'] };
    return {};
  };
  const GLOBAL = new Set(['/healthz', '/openapi.json', '/profiles/{id}', '/policies/{id}', '/sessions']);
  let tried = 0;
  const leaks = [];
  for (const { tpl, method } of ops) {
    for (const runKey of tpl.includes('{') && tpl.startsWith('/runs/') ? ['run', 'artRun'] : ['run']) {
      let p = fill(tpl, runKey);
      let query;
      if (tpl === '/runs' && method === 'GET') query = { session_id: ids.session };
      if (tpl === '/approvals' && method === 'GET') query = { run_id: ids.run };
      const body = method === 'GET' ? undefined : bodyFor(tpl);
      const r = method === 'GET' ? await b.request('GET', p, { query }) : await b.request(method, p, { body, query });
      tried++;
      const where = `B: ${method} ${p}`;
      // An id B sent may come back in the error's message; anything else
      // of A's in an answer is a leak.
      const sent = p + JSON.stringify(query || {}) + JSON.stringify(body || {});
      for (const s of secrets) if (!sent.includes(s) && r.text.includes(s)) leaks.push(`${where} shows ${s}`);
      const code = r.json && r.json.error ? r.json.error.code : null;
      const listing = r.status === 200 && r.json && Array.isArray(r.json.items);
      const known = /^\/(profiles|policies)\//.test(tpl) || OPEN.has(tpl);
      if (tpl === '/a2a')
        check(r.status === 200 && r.json?.error?.code === -32001, `${where} (GetTask of A's run): A2A TaskNotFound`, [r.status, r.text.slice(0, 200)]);
      else if (tpl === '/profiles' && method === 'GET')
        check(r.status === 200 && !r.json.items.some((x) => x.tenant_id === 'acme'), `${where}: only global and globex profiles`, r.json.items?.map((x) => x.profile_id));
      else if (tpl === '/knowledge/search')
        check([403, 404].includes(r.status) && ['knowledge_source_scope_denied', 'resource_not_found'].includes(code),
          `${where} (A's source): 403 knowledge_source_scope_denied or 404`, [r.status, code]);
      else if (tpl === '/sessions' && method === 'POST')
        check(r.status === 201 && r.json.tenant_id === 'globex', `${where}: B's own session, in globex`, r.json);
      else if (tpl === '/metrics')
        check(r.status === 200 && r.text.includes('tenant="globex"') && !r.text.includes('tenant="acme"'),
          `${where}: B's admin token gets globex's own counts only`, [r.status, r.text.slice(0, 200)]);
      else if (listing)
        check(r.json.items.length === 0, `${where}: an empty listing for A's ${tpl === '/runs' ? 'session' : 'run'}`, r.json.items.length);
      else if (known)
        check(r.status === 200, `${where}: a global object (or the open routes) for everyone`, r.status);
      else
        check(r.status === 404 && code === 'resource_not_found', `${where}: 404 resource_not_found`, [r.status, r.text.slice(0, 200)]);
    }
  }
  check(leaks.length === 0, `none of B's ${tried} answers names any of A's ids or data`, leaks);
  const bAll = await b.expect(200, 'GET', '/runs');
  check(!bAll.items.some((x) => x.tenant_id !== 'globex'), "B's unfiltered GET /runs holds only globex runs", bAll.items.map((x) => x.tenant_id));
  const bApv = await b.expect(200, 'GET', '/approvals');
  eq(bApv.items, [], "B's GET /approvals is empty");
  const bSearch = await b.expect(200, 'POST', '/knowledge/search', { body: { query: 'deploy rollback' } });
  check(!bSearch.citations.some((c) => c.source === 'repo_docs'), "B's search over all it can see finds nothing in A's repo_docs", bSearch.citations);
  const bStream = await b.stream(ids.artRun, { timeoutMs: 5000 });
  checkError({ status: bStream.status, json: bStream.json, text: bStream.text || '' }, 404, 'resource_not_found', "B: GET A's run stream");

  // A's objects are as they were.
  const still = await a.approval(ids.approval);
  eq(still.status, 'pending', "A's approval is still pending after B's :approve / :reject");
  const stillRun = await a.getRun(ids.run);
  eq(stillRun.state, 'waiting_approval', "A's run is still waiting after B's :cancel / :pause / :resume");
  eq((await a.getRun(ids.artRun)).state, 'completed', "A's completed run is still completed");
  for (const blob of ['secret of acme']) {
    const c = await a.request('GET', `/runs/${ids.artRun}/artifacts/patch.diff`);
    check(c.text.includes(blob), "A still reads its own patch");
  }

  // --- no token / an unknown token: 401 everywhere but two routes --------
  for (const c of [anon, wrong]) {
    let n = 0;
    for (const { tpl, method } of ops) {
      const p = fill(tpl);
      const r = method === 'GET' ? await c.request('GET', p) : await c.request(method, p, { body: bodyFor(tpl) });
      n++;
      if (OPEN.has(tpl)) check(r.status === 200, `${c.name}: ${method} ${p} is open: 200`, r.status);
      else if (!checkError(r, 401, 'unauthenticated', `${c.name}: ${method} ${p}`)) break;
    }
    const s = await c.stream(ids.run, { timeoutMs: 5000 });
    check(s.status === 401, `${c.name}: the stream is 401 too`, s.status);
  }

  // --- project scope, roles, audit ---------------------------------------
  const p2 = await a.start({ project_id: 'p2', goal: 'TEN-P2: write in project two' });
  const p2w = await a.waitState(p2.run.run_id, ['completed', 'failed', 'waiting_approval']);
  if (!check(p2w.state === 'completed', "a run of project p2 writes in p2's workspace without asking (acceptEdits): it works in p2's folder", p2w)) {
    const x = await a.pendingApproval(p2.run.run_id).catch(() => null);
    if (x) await a.post(`/approvals/${x.approval_id}:approve`, {});
    await a.waitState(p2.run.run_id, ['completed', 'failed']);
  }
  checkError(await p1.get(`/sessions/${p2.session.session_id}`), 403, 'project_scope_denied', "a p1-bound token reading p2's session");
  checkError(await p1.get(`/runs/${p2.run.run_id}`), 403, 'project_scope_denied', "a p1-bound token reading p2's run");
  checkError(await p1.get(`/runs/${p2.run.run_id}/artifacts/patch.diff`), 403, 'artifact_scope_denied', "a p1-bound token reading p2's artifact");
  checkError(await p1.post('/sessions', { project_id: 'p2' }), 403, 'project_scope_denied', 'a p1-bound token creating a session in p2');
  const mine = await p1.expect(201, 'POST', '/sessions', { body: { project_id: 'p1' } });
  eq(mine.project_id, 'p1', 'the p1-bound token creates sessions in p1');
  const p1runs = await p1.expect(200, 'GET', '/runs');
  check(p1runs.items.every((x) => x.project_id === 'p1'), "the p1-bound token's run listing holds only p1 runs");
  checkError(await viewer.post('/tasks', { session_id: ids.session, goal: 'viewer' }), 403, 'project_scope_denied', 'a viewer creating a task');
  checkError(await viewer.post('/runs', { task_id: ids.task }), 403, 'project_scope_denied', 'a viewer creating a run');
  eq((await viewer.getRun(ids.artRun)).run_id, ids.artRun, 'a viewer reads runs of its tenant');
  const bob = new Client(process.env.TOKEN_A2, undefined, 'bob');
  checkError(await bob.get(`/runs/${ids.artRun}/events`, { visibility: 'user,audit' }), 400, 'invalid_request',
    'audit visibility without an audit token');
  const aud = await a.allEvents(pol.run.run_id, { visibility: 'audit' });
  check(aud.length > 0 && aud.every((e) => e.visibility === 'audit') && ofType(aud, 'policy.denied').length > 0,
    'an audit token reads the audit events (policy.denied) alone with visibility=audit', aud.map((e) => e.type));
  checkError(await a.get(`/runs/${ids.artRun}/events`, { visibility: 'everything' }), 400, 'invalid_request', 'an unknown visibility');
  const scoped = await a.getRun(ids.artRun);
  eq([scoped.scopes.tenant_scope, scoped.scopes.project_scope], ['acme', 'p1'], 'a run carries its tenant and project scopes');
  check(artifacts.every((x) => x.scopes && x.scopes.tenant_scope === 'acme'), 'artifacts carry their scopes');

  // Clean end: A rejects its approval.
  await a.expect(200, 'POST', `/approvals/${ids.approval}:reject`, {});
  void show;
});
