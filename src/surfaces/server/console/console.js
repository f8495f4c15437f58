/* console.js — the run console of loom serve (docs/console.md).
 *
 * What it owns: the page's state (the token, the runs list, the open run
 * and its stream) and every DOM node under <main>. It calls only the
 * server's documented routes (openapi.json), each with the bearer token
 * the person typed, which lives in sessionStorage and nowhere else.
 *
 * Untrusted text (the model's answer, tool output, artifact bodies, ids)
 * reaches the DOM only through textContent and createElement: nothing is
 * ever assigned to innerHTML, and the markdown renderer below builds nodes,
 * so a reply holding <script> shows as text. Links in markdown keep only
 * http(s) targets. Charts are SVG nodes built here.
 *
 * The run's events come from GET /runs/{id}/stream read with fetch (an
 * EventSource cannot send an Authorization header), parsed as SSE, resumed
 * with Last-Event-ID after a drop. One stream at a time; switching runs
 * aborts the old one. Single-threaded (the browser's event loop). */
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const TOKEN_KEY = 'loom.console.token';
  const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'blocked_by_policy',
    'blocked_by_capability']);

  const st = {
    token: null,
    runs: [],
    profiles: [],
    run: null,          // the open run (a Run object, refreshed)
    stream: null,       // its AbortController
    lastSeq: 0,
    view: null,         // per-run view state (answer text, tool cards, agents)
    listTimer: null,
    approvalsTimer: null,
    usage: new Map(),   // run_id → RunUsage (GET /usage: cost, model, tool outcomes)
    usageAt: 0,
  };

  /* ---- DOM helpers: text only ----------------------------------------- */
  function el(tag, attrs, ...kids) {
    const n = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') n.className = v;
        else if (k === 'text') n.textContent = v;
        else if (k.startsWith('on')) n.addEventListener(k.slice(2), v);
        else n.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const c of kids) {
      if (c === null || c === undefined || c === false) continue;
      n.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return n;
  }
  const SVGNS = 'http://www.w3.org/2000/svg';
  function sv(tag, attrs, ...kids) {
    const n = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') n.textContent = v;
      else n.setAttribute(k, String(v));
    }
    for (const c of kids) if (c) n.append(c);
    return n;
  }
  function clear(n) { while (n.firstChild) n.removeChild(n.firstChild); return n; }
  function show(n, yes) { n.hidden = !yes; }

  function age(iso) {
    if (!iso) return '';
    const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
    if (s < 60) return `${Math.round(s)} s ago`;
    if (s < 3600) return `${Math.round(s / 60)} min ago`;
    if (s < 86400) return `${Math.round(s / 3600)} h ago`;
    return `${Math.round(s / 86400)} d ago`;
  }
  const fmtInt = (n) => (Number(n) || 0).toLocaleString('en-US', { maximumFractionDigits: 1 });
  const fmtUsd = (n) => (typeof n === 'number' && n >= 0 ? `$${n.toFixed(n < 1 ? 4 : 2)}` : '—');
  function fmtBytes(n) {
    if (n < 1024) return `${n} B`;
    if (n < 1048576) return `${(n / 1024).toFixed(1)} KiB`;
    return `${(n / 1048576).toFixed(1)} MiB`;
  }

  /* ---- the API -------------------------------------------------------- */
  class ApiError extends Error {
    constructor(status, env) {
      const e = (env && env.error) || {};
      super(e.message || `HTTP ${status}`);
      this.status = status;
      this.code = e.code || 'http_' + status;
    }
  }
  function headers(json) {
    const h = { Authorization: `Bearer ${st.token}` };
    if (json) h['Content-Type'] = 'application/json';
    return h;
  }
  async function api(method, path, body) {
    const res = await fetch(path, {
      method, headers: headers(body !== undefined), cache: 'no-store',
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch (_) { data = null; }
    if (!res.ok) {
      if (res.status === 401) logout('The server does not know this token.');
      throw new ApiError(res.status, data);
    }
    return data;
  }
  const q = (o) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null && v !== '') p.set(k, v);
    const s = p.toString();
    return s ? `?${s}` : '';
  };
  const enc = encodeURIComponent;

  /* ---- markdown: a small renderer that builds nodes ------------------- */
  function safeHref(u) {
    try {
      const url = new URL(u, location.href);
      return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
    } catch (_) { return null; }
  }
  function inline(text, into) {
    // code spans first, then **bold**, *em*/_em_, [links](http…)
    const re = /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;
    let last = 0, m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) into.append(document.createTextNode(text.slice(last, m.index)));
      if (m[1]) into.append(el('code', { text: m[2] }));
      else if (m[3] || m[4]) { const b = el('strong'); inline(m[3] || m[4], b); into.append(b); }
      else if (m[5] || m[6]) { const i = el('em'); inline(m[5] || m[6], i); into.append(i); }
      else if (m[7]) {
        const href = safeHref(m[8]);
        if (href) into.append(el('a', { href, rel: 'noopener noreferrer nofollow', target: '_blank', text: m[7] }));
        else into.append(document.createTextNode(m[0]));
      }
      last = re.lastIndex;
    }
    if (last < text.length) into.append(document.createTextNode(text.slice(last)));
    return into;
  }
  function markdown(src, into) {
    clear(into);
    const lines = String(src).replace(/\r\n?/g, '\n').split('\n');
    let i = 0;
    let para = [];
    const flush = () => {
      if (para.length) into.append(inline(para.join(' '), el('p')));
      para = [];
    };
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if ((m = /^\s*(```|~~~)\s*([\w+-]*)\s*$/.exec(line))) {
        flush();
        const fence = m[1], body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
        i++;
        into.append(el('pre', null, el('code', { 'data-lang': m[2] || null, text: body.join('\n') })));
        continue;
      }
      if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        flush();
        const level = Math.min(6, m[1].length + 2); // the page's h1/h2 are taken
        into.append(inline(m[2], el(`h${level}`)));
        i++; continue;
      }
      if (/^\s*([-*_])\s*\1\s*\1[\s\1]*$/.test(line)) { flush(); into.append(el('hr')); i++; continue; }
      if (/^\s*>/.test(line)) {
        flush();
        const body = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''));
        const bq = el('blockquote');
        markdown(body.join('\n'), bq);
        into.append(bq);
        continue;
      }
      if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
        flush();
        const ordered = /^\s*\d/.test(line);
        const list = el(ordered ? 'ol' : 'ul');
        while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
          let item = lines[i++].replace(/^\s*([-*+]|\d+[.)])\s+/, '');
          while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i]))
            item += ' ' + lines[i++].trim();
          list.append(inline(item, el('li')));
        }
        into.append(list);
        continue;
      }
      if (line.trim() === '') { flush(); i++; continue; }
      para.push(line.trim());
      i++;
    }
    flush();
    return into;
  }

  /* ---- login ---------------------------------------------------------- */
  async function login(token) {
    st.token = token;
    const err = $('login-error');
    show(err, false);
    try {
      await api('GET', '/runs?limit=1');
    } catch (e) {
      st.token = null;
      sessionStorage.removeItem(TOKEN_KEY);
      err.textContent = e.status === 401 ? 'The server does not know this token.' : `Login failed: ${e.message}`;
      show(err, true);
      return false;
    }
    sessionStorage.setItem(TOKEN_KEY, token);
    show($('login'), false);
    show($('app'), true);
    show($('tabs'), true);
    show($('logout'), true);
    $('who').textContent = `token …${token.slice(-4)}`;
    await loadProfiles();
    await refreshRuns();
    clearInterval(st.listTimer);
    st.listTimer = setInterval(() => refreshRuns().catch(() => {}), 2500);
    const fromHash = /^#run=(run_[a-z0-9]+)$/.exec(location.hash);
    if (fromHash) openRun(fromHash[1]);
    return true;
  }
  function logout(message) {
    closeStream();
    clearInterval(st.listTimer);
    clearInterval(st.approvalsTimer);
    st.token = null;
    st.runs = [];
    st.run = null;
    sessionStorage.removeItem(TOKEN_KEY);
    clear($('runs'));
    show($('app'), false);
    show($('tabs'), false);
    show($('logout'), false);
    show($('run'), false);
    $('who').textContent = '';
    show($('login'), true);
    if (message) { $('login-error').textContent = message; show($('login-error'), true); }
  }

  /* ---- profiles and starting a run ------------------------------------ */
  async function loadProfiles() {
    const sel = clear($('profile'));
    try {
      const page = await api('GET', '/profiles');
      st.profiles = page.items || [];
    } catch (_) { st.profiles = []; }
    if (!st.profiles.length) sel.append(el('option', { value: '', text: '(the default profile)' }));
    for (const p of st.profiles) {
      const id = p.profile_id || p.id;
      const label = p.model ? `${id} — ${p.model}` : id;
      sel.append(el('option', { value: id, text: label, selected: id === 'default' }));
    }
  }
  async function startRun(ev) {
    ev.preventDefault();
    const err = $('start-error');
    show(err, false);
    const goal = $('goal').value.trim();
    if (!goal) return;
    $('start').disabled = true;
    try {
      const sess = await api('POST', '/sessions', {});
      const task = { session_id: sess.session_id, goal };
      if ($('profile').value) task.agent_profile = $('profile').value;
      const t = await api('POST', '/tasks', task);
      const run = await api('POST', '/runs', { task_id: t.task_id });
      $('goal').value = '';
      await refreshRuns();
      openRun(run.run_id);
    } catch (e) {
      err.textContent = `Could not start: ${e.message}`;
      show(err, true);
    } finally {
      $('start').disabled = false;
    }
  }

  /* ---- the runs list -------------------------------------------------- */
  async function refreshRuns() {
    if (!st.token) return;
    const state = $('state-filter').value;
    const items = [];
    let cursor = null;
    for (let page = 0; page < 5; page++) {
      const r = await api('GET', '/runs' + q({ state, limit: 200, cursor }));
      items.push(...(r.items || []));
      cursor = r.next_cursor;
      if (!cursor) break;
    }
    st.runs = items;
    // Costs come from GET /usage (it reads every run's events): every 10 s,
    // and at once when a run is new or changed state since the last read.
    const stale = items.some((r) => { const u = st.usage.get(r.run_id); return !u || u.state !== r.state; });
    if (Date.now() - st.usageAt > 10000 || stale) {
      st.usageAt = Date.now();
      try {
        for (const u of await allUsage()) st.usage.set(u.run_id, u);
      } catch (_) { /* the list still shows */ }
    }
    renderRuns();
  }
  async function allUsage() {
    const out = [];
    let cursor = null;
    for (let page = 0; page < 5; page++) {
      const r = await api('GET', '/usage' + q({ limit: 200, cursor }));
      out.push(...(r.items || []));
      cursor = r.next_cursor;
      if (!cursor) break;
    }
    return out;
  }
  function renderRuns() {
    const sessions = [...new Set(st.runs.map((r) => r.session_id))];
    const sf = $('session-filter');
    const keep = sf.value;
    if (sf.options.length - 1 !== sessions.length) {
      clear(sf).append(el('option', { value: '', text: 'every session' }));
      for (const s of sessions) sf.append(el('option', { value: s, text: s, selected: s === keep }));
    }
    const list = clear($('runs'));
    const shown = st.runs.filter((r) => !sf.value || r.session_id === sf.value);
    show($('runs-empty'), shown.length === 0);
    for (const r of shown) {
      const u = r.usage || {};
      const live = st.run && st.run.run_id === r.run_id ? st.view.cost : undefined;
      const cost = live !== undefined ? live : (st.usage.get(r.run_id) || {}).cost_usd;
      const b = el('button', {
        type: 'button', class: 'run-item', 'data-run': r.run_id,
        'aria-current': st.run && st.run.run_id === r.run_id ? 'true' : 'false',
        onclick: () => openRun(r.run_id),
      },
      el('span', { class: `state ${r.state}`, text: r.state }),
      el('span', { class: 'goal', text: r.goal || r.run_id }),
      el('span', { class: 'meta', text: `${age(r.created_at)} · ${fmtInt((u.input_tokens || 0) + (u.output_tokens || 0))} tokens · ${fmtUsd(cost)} · ${r.agent_profile || ''}` }));
      list.append(el('li', null, b));
      // A list read before a Cancel can be answered after the run's
      // run.state_changed: a run leaves an ended state only by an action
      // (Resume), whose answer act() applies, never by a list.
      const reopened = TERMINAL.has(st.run ? st.run.state : '') && !TERMINAL.has(r.state);
      if (st.run && st.run.run_id === r.run_id && st.run.state !== r.state && !reopened) {
        st.run = r;
        renderRunHead();
      }
    }
  }

  /* ---- the run view --------------------------------------------------- */
  function newView() {
    return {
      segments: [],     // finished replies
      current: '',      // the reply streaming now
      tools: new Map(), // call_id → {node, …}
      agents: new Map(),// agent_id → {info, children, parent}
      callAgent: new Map(), // call_id → agent_id that made it
      cost: undefined,
      usage: { input_tokens: 0, output_tokens: 0 },
      turns: 0,
      working: null,    // the latest working.updated payload of the run itself
      drawPending: false,
      ended: false,
    };
  }
  function closeStream() {
    if (st.stream) st.stream.abort();
    st.stream = null;
  }
  async function openRun(id) {
    closeStream();
    clearInterval(st.approvalsTimer);
    let run;
    try { run = await api('GET', `/runs/${enc(id)}`); } catch (e) { return; }
    st.run = run;
    st.view = newView();
    st.lastSeq = 0;
    history.replaceState(null, '', `#run=${run.run_id}`);
    show($('run'), true);
    show($('viewer'), false);
    clear($('answer'));
    clear($('tools'));
    clear($('approvals'));
    clear($('artifacts'));
    clear($('agents')).append(el('li', { class: 'muted', text: 'none' }));
    clear($('heartbeat')).append(el('li', { class: 'muted', text: 'no events' }));
    // Beside the transcript it is open; at phone width it sits below it,
    // folded, so the answer stays on the first screen.
    $('working-fold').open = !window.matchMedia('(max-width: 760px)').matches;
    drawWorking();
    renderRunHead();
    renderRuns();
    refreshApprovals();
    refreshArtifacts();
    st.approvalsTimer = setInterval(() => {
      if (st.run && !TERMINAL.has(st.run.state)) refreshApprovals();
    }, 5000);
    follow(run.run_id);
  }
  function renderRunHead() {
    const r = st.run, v = st.view;
    const s = $('run-state');
    s.className = `state ${r.state}`;
    s.textContent = r.state;
    $('run-goal').textContent = r.goal || r.run_id;
    const step = r.current_step ? ` · step ${r.current_step}` : '';
    $('run-meta').textContent = `${r.run_id} · session ${r.session_id} · profile ${r.agent_profile || '—'} · started ${age(r.created_at)}${step}` +
      (r.error ? ` · ${r.error.code}: ${r.error.message}` : '') + (r.stop_reason ? ` · stop ${r.stop_reason}` : '');
    $('act-pause').disabled = !(r.state === 'running' || r.state === 'queued');
    $('act-resume').disabled = !(r.state === 'paused' || r.state === 'failed');
    $('act-cancel').disabled = TERMINAL.has(r.state);
    const u = r.usage && (r.usage.input_tokens || r.usage.output_tokens) ? r.usage : v.usage;
    const dl = clear($('run-usage'));
    const item = (k, val) => dl.append(el('div', null, el('dt', { text: k }), el('dd', { text: val })));
    item('input tokens', fmtInt(u.input_tokens));
    item('output tokens', fmtInt(u.output_tokens));
    item('model turns', fmtInt(v.turns));
    item('tool calls', fmtInt(v.tools.size));
    item('cost', fmtUsd(v.cost));
  }
  async function act(action, body) {
    if (!st.run) return;
    try {
      st.run = await api('POST', `/runs/${enc(st.run.run_id)}:${action}`, body || {});
      renderRunHead();
      if (action === 'resume') follow(st.run.run_id, st.lastSeq);
      refreshRuns().catch(() => {});
    } catch (e) {
      $('run-meta').textContent = `${action} refused: ${e.message}`;
    }
  }

  /* ---- the event stream (SSE over fetch) ------------------------------ */
  async function follow(runId, after) {
    closeStream();
    const ctl = new AbortController();
    st.stream = ctl;
    let backoff = 500;
    while (!ctl.signal.aborted) {
      let ended = false;
      try {
        const h = headers(false);
        h.Accept = 'text/event-stream';
        if (st.lastSeq > 0) h['Last-Event-ID'] = String(st.lastSeq);
        const res = await fetch(`/runs/${enc(runId)}/stream` + (after && !st.lastSeq ? q({ after }) : ''),
          { headers: h, signal: ctl.signal, cache: 'no-store' });
        if (res.status === 401) { logout('The server does not know this token.'); return; }
        if (!res.ok || !res.body) throw new Error(`stream ${res.status}`);
        backoff = 500;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let cut;
          while ((cut = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            if (sseBlock(block)) ended = true;
          }
        }
      } catch (e) {
        if (ctl.signal.aborted) return;
      }
      if (ended || ctl.signal.aborted) return;
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 8000);
    }
  }
  // One SSE block; true for the closing `end` event.
  function sseBlock(block) {
    let event = 'message', data = [], id = null;
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const k = c < 0 ? line : line.slice(0, c);
      const v = c < 0 ? '' : line.slice(c + 1).replace(/^ /, '');
      if (k === 'event') event = v;
      else if (k === 'data') data.push(v);
      else if (k === 'id') id = v;
    }
    if (!data.length) return false;
    let obj;
    try { obj = JSON.parse(data.join('\n')); } catch (_) { return false; }
    if (event === 'end') { onEnd(obj); return true; }
    if (id !== null) st.lastSeq = Math.max(st.lastSeq, Number(id) || 0);
    onEvent(obj);
    return false;
  }

  function onEnd(obj) {
    const v = st.view;
    v.ended = true;
    if (v.current) { v.segments.push(v.current); v.current = ''; }
    drawAnswer();
    api('GET', `/runs/${enc(st.run.run_id)}`).then((r) => { st.run = r; renderRunHead(); }).catch(() => {});
    refreshApprovals();
    refreshArtifacts();
    refreshRuns().catch(() => {});
    $('run').setAttribute('data-ended', obj.state || 'ended');
  }

  function onEvent(e) {
    const v = st.view, p = e.payload || {};
    switch (e.type) {
    case 'token.delta':
      if (p.channel !== 'reasoning' && !p.agent_id) { v.current += p.text || ''; scheduleAnswer(); }
      break;
    case 'stream.restarted':
      if (!p.agent_id) { v.current = ''; scheduleAnswer(); }
      break;
    case 'model.completed':
      if (!p.agent_id) {
        if (v.current) { v.segments.push(v.current); v.current = ''; }
        v.turns++;
        scheduleAnswer();
      }
      if (p.usage && !p.agent_id) {
        // Events carry the loop's usage object (inputTokens, …); run
        // objects the server's (input_tokens, …).
        v.usage.input_tokens += p.usage.inputTokens || 0;
        v.usage.output_tokens += p.usage.outputTokens || 0;
      }
      if (typeof p.cost_usd === 'number' && !p.agent_id) v.cost = p.cost_usd;
      renderRunHead();
      break;
    case 'model.usage':
      if (typeof p.cost_usd === 'number' && !p.agent_id) v.cost = p.cost_usd;
      renderRunHead();
      break;
    case 'run.state_changed':
      if (p.state && st.run) {
        st.run = Object.assign({}, st.run, { state: p.state });
        if (typeof p.cost_usd === 'number') v.cost = p.cost_usd;
        renderRunHead();
        refreshApprovals();
      }
      break;
    case 'run.completed':
      if (st.run) { st.run = Object.assign({}, st.run, { state: p.state, summary: p.summary, usage: p.usage || st.run.usage }); renderRunHead(); }
      break;
    case 'tool.started': toolStarted(e, p); break;
    case 'tool.progress': toolProgress(p); break;
    case 'tool.finished':
    case 'tool.failed': toolFinished(e, p); break;
    case 'approval.requested':
    case 'approval.resolved':
    case 'approval.answered':
      refreshApprovals();
      break;
    case 'artifact.created': refreshArtifacts(); break;
    case 'agent.spawned':
    case 'agent.progress':
    case 'agent.completed': agentEvent(e.type, p); break;
    case 'heartbeat.event': heartbeat(e, p); break;
    case 'working.updated':
      // A sub-agent's working memory is its own; the panel is the run's.
      if (!p.agent_id) { v.working = p; drawWorking(); }
      break;
    default: break;
    }
  }

  function scheduleAnswer() {
    const v = st.view;
    if (v.drawPending) return;
    v.drawPending = true;
    requestAnimationFrame(() => { v.drawPending = false; drawAnswer(); });
  }
  function drawAnswer() {
    const v = st.view;
    const text = v.segments.concat(v.current ? [v.current] : []).join('\n\n');
    const box = $('answer');
    markdown(text, box);
    if (!v.ended && st.run && !TERMINAL.has(st.run.state)) {
      const last = box.lastElementChild || box;
      last.append(el('span', { class: 'cursor', 'aria-hidden': 'true' }));
    }
  }

  /* ---- tool cards ----------------------------------------------------- */
  function diffOfInput(tool, input) {
    // A file edit's change as diff lines: Edit's old → new, Write's content.
    if (!input) return null;
    const file = input.file_path || input.path || input.notebook_path;
    if (tool === 'Edit' && typeof input.old_string === 'string') {
      return [`--- ${file}`, `+++ ${file}`]
        .concat(input.old_string.split('\n').map((l) => '-' + l))
        .concat(String(input.new_string || '').split('\n').map((l) => '+' + l)).join('\n');
    }
    if (tool === 'MultiEdit' && Array.isArray(input.edits)) {
      const out = [`--- ${file}`, `+++ ${file}`];
      for (const ed of input.edits) {
        out.push('@@');
        out.push(...String(ed.old_string || '').split('\n').map((l) => '-' + l));
        out.push(...String(ed.new_string || '').split('\n').map((l) => '+' + l));
      }
      return out.join('\n');
    }
    if (tool === 'Write' && typeof input.content === 'string') {
      return [`--- /dev/null`, `+++ ${file}`].concat(input.content.replace(/\n$/, '').split('\n').map((l) => '+' + l)).join('\n');
    }
    return null;
  }
  function toolStarted(e, p) {
    const v = st.view;
    const id = p.call_id || e.correlation_id || `t${v.tools.size}`;
    if (p.agent_id) v.callAgent.set(id, p.agent_id);
    const input = p.input || {};
    const summary = input.command || input.file_path || input.pattern || input.url || input.description || '';
    const status = el('span', { class: 'badge run', text: 'running' });
    const dur = el('span', { class: 'sub' });
    const out = el('pre', { class: 'out' });
    const outBox = el('details', { class: 'output' }, el('summary', { text: 'output' }), out);
    const card = el('li', { class: 'tool', 'data-call': id, 'data-tool': p.tool || '' },
      el('header', null,
        el('span', { class: 'name', text: p.tool || 'tool' }),
        p.agent_id ? el('span', { class: 'agent', text: p.agent_name || p.agent_id }) : null,
        status, dur),
      summary ? el('pre', { class: 'cmd', text: summary }) : null);
    const d = diffOfInput(p.tool, input);
    if (d) card.append(renderDiff(d));
    else if (!summary && Object.keys(input).length) card.append(el('pre', { text: JSON.stringify(input, null, 2) }));
    card.append(outBox);
    v.tools.set(id, { card, status, dur, out, outBox, live: '' });
    $('tools').append(card);
    renderRunHead();
  }
  function toolProgress(p) {
    const t = st.view.tools.get(p.call_id);
    if (!t || typeof p.output !== 'string') return;
    t.live += p.output;
    t.out.textContent = t.live.slice(-20000);
  }
  function toolFinished(e, p) {
    const v = st.view;
    const id = p.call_id || e.correlation_id;
    let t = v.tools.get(id);
    if (!t) { toolStarted(e, p); t = v.tools.get(id || `t${v.tools.size - 1}`); }
    if (!t) return;
    const failed = e.type === 'tool.failed' || p.is_error;
    const raw = p.raw || {};
    const code = raw.exit_code !== undefined ? raw.exit_code : (raw.returncode !== undefined ? raw.returncode : null);
    t.status.className = `badge ${failed ? 'fail' : 'ok'}`;
    t.status.textContent = code !== null ? `exit ${code}` : (failed ? 'failed' : 'ok');
    if (typeof p.duration_ms === 'number') t.dur.textContent = `${p.duration_ms} ms`;
    const output = typeof p.output === 'string' ? p.output : '';
    t.out.textContent = output || t.live || '(no output)';
    const chars = p.output_chars || output.length;
    t.outBox.firstChild.textContent = `output (${fmtInt(chars)} chars)`;
    t.card.setAttribute('data-done', failed ? 'failed' : 'ok');
  }

  /* ---- sub-agents: a tree from agent.* events -------------------------- */
  function agentEvent(type, p) {
    const v = st.view;
    let a = v.agents.get(p.agent_id);
    if (!a) {
      a = { id: p.agent_id, info: {}, parent: null };
      v.agents.set(p.agent_id, a);
    }
    Object.assign(a.info, p);
    if (type === 'agent.spawned') {
      a.parent = (p.parent_call_id && v.callAgent.get(p.parent_call_id)) || null;
      a.info.state = 'running';
    }
    if (type === 'agent.completed') a.info.state = p.state || 'completed';
    drawAgents();
  }
  function drawAgents() {
    const v = st.view;
    const root = clear($('agents'));
    if (!v.agents.size) { root.append(el('li', { class: 'muted', text: 'none' })); return; }
    const kids = (pid) => [...v.agents.values()].filter((a) => (a.parent || null) === pid);
    const build = (a) => {
      const i = a.info;
      const line = el('div', { class: 'agent-line' },
        el('span', { class: `state ${i.state === 'running' ? 'running' : (i.state === 'completed' || i.state === 'idle' ? 'completed' : 'failed')}`, text: i.state || '' }),
        el('strong', { text: i.name || i.agent_type || a.id }),
        el('span', { class: 'muted', text: [i.model, i.tool ? `tool ${i.tool}` : null,
          i.tokens ? `${fmtInt(i.tokens)} tokens` : null,
          i.duration_ms ? `${i.duration_ms} ms` : null].filter(Boolean).join(' · ') }));
      const li = el('li', { 'data-agent': a.id }, line);
      const ch = kids(a.id);
      if (ch.length) li.append(el('ul', null, ...ch.map(build)));
      return li;
    };
    for (const a of kids(null)) root.append(build(a));
  }

  /* ---- the working memory panel (working.updated, docs/events.md) ------ */
  const PLAN_MARK = { pending: '\u2610', in_progress: '\u25D0', completed: '\u2611' };
  function drawWorking() {
    const w = st.view && st.view.working;
    show($('working-empty'), !w);
    show($('working-body'), !!w);
    $('working-turn').textContent = w ? `turn ${fmtInt(w.turn)}` : '';
    if (!w) return;
    const d = w.dashboard || {};
    const dl = clear($('working-dash'));
    const row = (k, ...val) => dl.append(el('div', null, el('dt', { text: k }), el('dd', null, ...val)));
    const gauge = (label, used, max) => el('meter', { min: 0, max, value: Math.min(used, max),
      low: max * 0.7, high: max * 0.9, optimum: 0, 'aria-label': label });
    const tokens = d.window > 0
      ? `${fmtInt(d.tokens)} of ${fmtInt(d.window)} (${Math.round((100 * d.tokens) / d.window)}%)`
      : `~${fmtInt(d.tokens)} (window unknown)`;
    row('context', d.window > 0 ? gauge('context tokens of the window', d.tokens, d.window) : null,
      el('span', { 'data-k': 'tokens', text: tokens }));
    if (d.budget_total > 0) {
      row('budget', gauge('token budget used', d.budget_used, d.budget_total),
        el('span', { text: `${fmtInt(d.budget_used)} of ${fmtInt(d.budget_total)} tokens` }));
    } else {
      row('budget', el('span', { class: 'muted', text: `${fmtInt(d.budget_used)} tokens (no budget)` }));
    }
    row('turn', el('span', { 'data-k': 'turn', text: fmtInt(d.turn) }));
    row('errors', el('span', { class: d.errors_recent > 0 ? 'warn' : null, 'data-k': 'errors',
      text: `${fmtInt(d.errors_recent)} in the last 10 steps` }));
    if (d.depth > 0) row('depth', el('span', { text: fmtInt(d.depth) }));
    row('heartbeat', el('span', { 'data-k': 'heartbeat',
      text: d.last_hb_ms > 0 ? `last tick ${new Date(d.last_hb_ms).toLocaleTimeString()}` : 'off' }));
    const plan = clear($('working-plan'));
    const items = Array.isArray(w.plan) ? w.plan : [];
    if (!items.length) plan.append(el('li', { class: 'muted', text: 'no plan (or every item is done)' }));
    for (const it of items) {
      const status = PLAN_MARK[it.status] ? it.status : 'pending';
      const text = status === 'in_progress' && it.activeForm ? it.activeForm : it.content;
      plan.append(el('li', { 'data-status': status, 'data-content': it.content || '' },
        el('span', { class: 'mark', 'aria-hidden': 'true', text: PLAN_MARK[status] }),
        el('span', { class: 'text', text: text || '' }),
        el('span', { class: 'sr-only', text: ` (${status.replace('_', ' ')})` })));
    }
    const evs = clear($('working-events'));
    const open = Array.isArray(w.events) ? w.events : [];
    if (!open.length) evs.append(el('li', { class: 'muted', text: 'none' }));
    for (const e of open) {
      evs.append(el('li', { 'data-event': e.event_id },
        el('span', { class: `urg-${e.urgency || 'low'}`, text: `${e.urgency || 'low'} ` }),
        el('span', { text: `${e.source || ''}: ${e.summary || ''}` }),
        el('span', { class: 'muted', text: e.state === 'acknowledged' ? ' · acknowledged' : ' · pending' })));
    }
  }

  function heartbeat(e, p) {
    // In the timeline, in order with the tool calls it happened between.
    $('tools').append(el('li', { class: 'beat', 'data-event': p.event_id || '' },
      el('span', { class: `urg-${p.urgency || 'low'}`, text: `heartbeat · ${p.urgency || 'low'} ` }),
      el('span', { text: `${p.source || ''}: ${p.summary || ''}` }),
      el('span', { class: 'muted', text: ` · ${p.action || ''} · ${new Date(e.ts).toLocaleTimeString()}` })));
    const ul = $('heartbeat');
    if (ul.firstChild && ul.firstChild.classList.contains('muted')) clear(ul);
    ul.prepend(el('li', null,
      el('span', { class: `urg-${p.urgency || 'low'}`, text: `${p.urgency || 'low'} ` }),
      el('span', { text: `${p.source || ''}: ${p.summary || ''}` }),
      el('span', { class: 'muted', text: ` · ${p.action || ''} · ${new Date(e.ts).toLocaleTimeString()}` })));
  }

  /* ---- approvals ------------------------------------------------------ */
  let approvalsBusy = false, approvalsAgain = false;
  async function refreshApprovals() {
    if (!st.run) return;
    if (approvalsBusy) { approvalsAgain = true; return; }
    approvalsBusy = true;
    const runId = st.run.run_id;
    try {
      const page = await api('GET', '/approvals' + q({ run_id: runId }));
      if (!st.run || st.run.run_id !== runId) return;
      drawApprovals(page.items || []);
    } catch (_) { /* the next event or tick tries again */ }
    finally {
      approvalsBusy = false;
      if (approvalsAgain) { approvalsAgain = false; refreshApprovals(); }
    }
  }
  function drawApprovals(items) {
    const box = $('approvals');
    const want = new Map();
    for (const a of items) {
      const expired = a.status === 'expired' || (a.status === 'pending' && a.expires_at && Date.parse(a.expires_at) < Date.now());
      if (a.status === 'pending' || expired) want.set(a.approval_id, Object.assign({}, a, { expired }));
    }
    for (const card of [...box.children]) {
      const a = want.get(card.dataset.approval);
      if (!a || (a.expired && !card.classList.contains('expired'))) card.remove();
    }
    for (const a of want.values()) {
      if (box.querySelector(`[data-approval="${CSS.escape(a.approval_id)}"]`)) continue;
      box.append(approvalCard(a));
    }
  }
  function approvalCard(a) {
    const ctx = a.context || {};
    const input = ctx.input || {};
    const card = el('section', { class: `approval${a.expired ? ' expired' : ''}`, 'data-approval': a.approval_id,
      'aria-label': `Approval ${a.approval_id}` },
    el('h3', { text: a.expired ? 'Approval expired' : 'Approval needed' }),
    el('p', { class: 'q', text: a.question || `Allow ${ctx.tool || 'this tool'}?` }));
    if (ctx.command) card.append(el('pre', { class: 'cmd', text: ctx.command }));
    const d = diffOfInput(ctx.tool, input);
    if (d) card.append(renderDiff(d));
    else if (!ctx.command && Object.keys(input).length) card.append(el('pre', { text: JSON.stringify(input, null, 2) }));
    if (a.expired) {
      card.append(el('p', { class: 'error', text: `It expired at ${new Date(a.expires_at).toLocaleString()} without an answer; the tool call was denied.` }));
      return card;
    }
    const note = el('p', { class: 'muted', text: `Expires ${new Date(a.expires_at).toLocaleTimeString()} (${a.timeout_seconds} s after the request).` });
    const cid = `c-${a.approval_id}`;
    const comment = el('textarea', { id: cid, rows: 2, placeholder: 'optional' });
    const msg = el('p', { class: 'error', role: 'alert', hidden: true });
    const answer = async (approve) => {
      for (const b of card.querySelectorAll('button')) b.disabled = true;
      try {
        const body = comment.value.trim() ? { comment: comment.value.trim() } : {};
        await api('POST', `/approvals/${enc(a.approval_id)}:${approve ? 'approve' : 'reject'}`, body);
        card.remove();
      } catch (e) {
        msg.textContent = e.code === 'run_approval_expired' ? 'This approval has expired.' : `Refused: ${e.message}`;
        show(msg, true);
        for (const b of card.querySelectorAll('button')) b.disabled = false;
      }
      refreshApprovals();
    };
    card.append(note, el('label', { for: cid, text: 'Comment' }), comment,
      el('div', { class: 'row' },
        el('button', { type: 'button', class: 'ok approve', onclick: () => answer(true), text: 'Approve' }),
        el('button', { type: 'button', class: 'danger reject', onclick: () => answer(false), text: 'Reject' })),
      msg);
    return card;
  }

  /* ---- artifacts and their viewers ------------------------------------ */
  async function refreshArtifacts() {
    if (!st.run) return;
    const runId = st.run.run_id;
    let page;
    try { page = await api('GET', `/runs/${enc(runId)}/artifacts`); } catch (_) { return; }
    if (!st.run || st.run.run_id !== runId) return;
    const ul = clear($('artifacts'));
    const items = page.items || [];
    if (!items.length) ul.append(el('li', { class: 'muted', text: 'none yet' }));
    for (const a of items) {
      ul.append(el('li', null,
        el('button', { type: 'button', class: 'artifact', 'data-name': a.name, onclick: () => viewArtifact(a), text: a.name }),
        el('span', { class: 'size', text: `${a.kind} · ${fmtBytes(a.size || 0)}` })));
    }
  }
  let viewing = null;
  async function viewArtifact(a) {
    const res = await fetch(`/runs/${enc(st.run.run_id)}/artifacts/${enc(a.name)}`, { headers: headers(false), cache: 'no-store' });
    const body = clear($('viewer-body'));
    $('viewer-title').textContent = a.title && a.title !== a.name ? `${a.name} — ${a.title}` : a.name;
    show($('viewer'), true);
    if (!res.ok) { body.append(el('p', { class: 'error', text: `Could not read it (${res.status}).` })); return; }
    const blob = await res.blob();
    viewing = { name: a.name, blob };
    const text = await blob.text();
    const type = (a.metadata && a.metadata.content_type) || res.headers.get('Content-Type') || '';
    if (a.kind === 'patch' || /diff|patch/.test(type) || /\.(diff|patch)$/.test(a.name)) body.append(renderDiff(text));
    else if (/json/.test(type) || /\.json$/.test(a.name)) {
      let v;
      try { v = JSON.parse(text); body.append(el('div', { class: 'json' }, jsonTree(v, null, 0))); } catch (_) { body.append(el('pre', { text })); }
    } else if (/markdown/.test(type) || /\.md$/.test(a.name)) body.append(markdown(text, el('div', { class: 'md' })));
    else body.append(el('pre', { text }));
    $('viewer').scrollIntoView({ block: 'nearest' });
    $('viewer-close').focus();
  }
  function download() {
    if (!viewing) return;
    const url = URL.createObjectURL(viewing.blob);
    const a = el('a', { href: url, download: viewing.name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  }
  function renderDiff(text) {
    const box = el('div', { class: 'diff', role: 'region', 'aria-label': 'diff' });
    for (const line of String(text).replace(/\n$/, '').split('\n')) {
      let cls = 'ln';
      if (/^diff --git |^index |^(---|\+\+\+) /.test(line)) cls = 'ln file';
      else if (line.startsWith('@@')) cls = 'ln hunk';
      else if (line.startsWith('+')) cls = 'ln add';
      else if (line.startsWith('-')) cls = 'ln del';
      box.append(el('div', { class: cls, text: line || ' ' }));
    }
    return box;
  }
  function jsonTree(v, key, depth) {
    const label = key !== null ? el('span', { class: 'k', text: JSON.stringify(key) + ': ' }) : null;
    if (v && typeof v === 'object') {
      const arr = Array.isArray(v);
      const entries = arr ? v.map((x, i) => [i, x]) : Object.entries(v);
      const d = el('details', { open: depth < 2 ? true : null },
        el('summary', null, label, arr ? `[${entries.length}]` : `{${entries.length}}`));
      for (const [k, x] of entries) d.append(jsonTree(x, arr ? null : k, depth + 1));
      return d;
    }
    const cls = typeof v === 'string' ? 's' : typeof v === 'number' ? 'n' : 'b';
    return el('div', { class: 'leaf' }, label, el('span', { class: cls, text: JSON.stringify(v) }));
  }

  /* ---- usage charts (inline SVG) ------------------------------------- */
  async function drawUsage() {
    const charts = clear($('charts'));
    const by = $('usage-by').value;
    const runs = await allUsage();
    for (const u of runs) st.usage.set(u.run_id, u);
    const keyOf = (r) => r[by] || '—';
    // Per-tool outcomes from the recent runs' events (GET /usage counts them per run).
    const recent = runs.slice(0, 20);
    const tools = new Map();
    await Promise.all(recent.map(async (r) => {
      let after = 0;
      for (let i = 0; i < 10; i++) {
        let page;
        try { page = await api('GET', `/runs/${enc(r.run_id)}/events` + q({ after, limit: 1000 })); } catch (_) { return; }
        for (const e of page.items || []) {
          const p = e.payload || {};
          if (e.type === 'tool.finished' || e.type === 'tool.failed') {
            const t = tools.get(p.tool) || { ok: 0, fail: 0 };
            if (e.type === 'tool.failed' || p.is_error) t.fail++; else t.ok++;
            tools.set(p.tool, t);
          }
        }
        after = page.next_after;
        if (!page.has_more) break;
      }
    }));
    const calls = runs.reduce((n, r) => n + r.tool_calls, 0), fails = runs.reduce((n, r) => n + r.tool_failures, 0);
    $('usage-note').textContent = `${runs.length} run${runs.length === 1 ? '' : 's'} · ${fmtInt(runs.reduce((n, r) => n + r.input_tokens + r.output_tokens, 0))} tokens · ` +
      `${fmtUsd(runs.reduce((n, r) => n + (r.cost_usd || 0), 0))} · ${fmtInt(calls)} tool calls, ${fmtInt(fails)} failed; per tool from the latest ${recent.length} runs.` +
      (runs.some((r) => typeof r.cost_usd === 'number') ? '' : ' No run reported a cost (the models have no known prices).');
    const buckets = bucketize(runs);
    const keys = [...new Set(runs.map(keyOf))];
    const sum = (sel) => buckets.map((b) => {
      const row = {};
      for (const r of b.runs) row[keyOf(r)] = (row[keyOf(r)] || 0) + sel(r);
      return { label: b.label, row };
    });
    charts.append(
      chartCard('Tokens over time', stacked(sum((r) => r.input_tokens + r.output_tokens), keys, fmtInt), keys),
      chartCard('Runs over time', stacked(sum(() => 1), keys, fmtInt), keys),
      chartCard('Cost over time (USD)', stacked(sum((r) => r.cost_usd || 0), keys, (n) => `$${n.toFixed(2)}`), keys),
      chartCard('Tool failure rate per tool', failureBars(tools), null),
      chartCard(`Tool failure rate by ${$('usage-by').selectedOptions[0].textContent}`, failureBars(byKey(runs, keyOf)), null));
  }
  function byKey(runs, keyOf) {
    const m = new Map();
    for (const r of runs) {
      const k = keyOf(r), c = m.get(k) || { ok: 0, fail: 0 };
      c.fail += r.tool_failures;
      c.ok += r.tool_calls - r.tool_failures;
      if (r.tool_calls) m.set(k, c);
    }
    return m;
  }
  function bucketize(runs) {
    if (!runs.length) return [];
    const times = runs.map((r) => Date.parse(r.created_at));
    const lo = Math.min(...times), hi = Math.max(...times);
    const spans = [60e3, 300e3, 3600e3, 86400e3, 7 * 86400e3];
    let span = spans.find((s) => (hi - lo) / s <= 24) || spans[spans.length - 1];
    const start = Math.floor(lo / span) * span;
    const n = Math.max(1, Math.floor((hi - start) / span) + 1);
    const out = [];
    for (let i = 0; i < n; i++) {
      const t = new Date(start + i * span);
      const label = span >= 86400e3 ? t.toISOString().slice(5, 10) : t.toISOString().slice(11, 16);
      out.push({ label, runs: [] });
    }
    runs.forEach((r, i) => out[Math.min(n - 1, Math.floor((times[i] - start) / span))].runs.push(r));
    return out;
  }
  function chartCard(title, svg, keys) {
    const card = el('figure', { class: 'card chart' }, el('figcaption', null, el('h3', { text: title })), svg);
    if (keys && keys.length) {
      card.append(el('div', { class: 'legend' }, ...keys.map((k, i) => el('span', null, el('i', { class: `k${i % 6}` }), k))));
    }
    return card;
  }
  function stacked(rows, keys, fmt) {
    const W = 480, H = 220, L = 48, B = 28, T = 10, R = 8;
    const svg = sv('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img' });
    const totals = rows.map((r) => keys.reduce((s, k) => s + (r.row[k] || 0), 0));
    const max = Math.max(1e-9, ...totals);
    svg.append(sv('title', { text: rows.map((r, i) => `${r.label}: ${fmt(totals[i])}`).join('; ') || 'no data' }));
    svg.append(sv('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }));
    svg.append(sv('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
    for (const f of [0, 0.5, 1]) {
      const y = H - B - f * (H - B - T);
      const v = max * f;
      svg.append(sv('text', { x: L - 4, y: y + 4, 'text-anchor': 'end', text: fmt(max >= 10 ? Math.round(v) : v) }));
    }
    if (!rows.length) { svg.append(sv('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', text: 'no runs yet' })); return svg; }
    const bw = (W - L - R) / rows.length;
    rows.forEach((r, i) => {
      let y = H - B;
      keys.forEach((k, ki) => {
        const v = r.row[k] || 0;
        if (!v) return;
        const h = (v / max) * (H - B - T);
        y -= h;
        const rect = sv('rect', { class: `k${ki % 6}`, x: L + i * bw + bw * 0.12, y, width: Math.max(1, bw * 0.76), height: h });
        rect.append(sv('title', { text: `${r.label} · ${k}: ${fmt(v)}` }));
        svg.append(rect);
      });
      if (rows.length <= 12 || i % Math.ceil(rows.length / 12) === 0)
        svg.append(sv('text', { x: L + i * bw + bw / 2, y: H - B + 16, 'text-anchor': 'middle', text: r.label }));
    });
    return svg;
  }
  function failureBars(tools) {
    const W = 480, L = 90, R = 60, rowH = 26;
    const list = [...tools.entries()].sort((a, b) => (b[1].ok + b[1].fail) - (a[1].ok + a[1].fail)).slice(0, 10);
    const H = Math.max(60, list.length * rowH + 20);
    const svg = sv('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img' });
    svg.append(sv('title', { text: list.map(([t, c]) => `${t}: ${c.fail} of ${c.ok + c.fail} failed`).join('; ') || 'no tool calls' }));
    if (!list.length) { svg.append(sv('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', text: 'no tool calls yet' })); return svg; }
    list.forEach(([tool, c], i) => {
      const y = 10 + i * rowH, n = c.ok + c.fail, w = W - L - R;
      const fw = (c.fail / n) * w;
      svg.append(sv('text', { x: L - 6, y: y + 15, 'text-anchor': 'end', text: tool }));
      svg.append(sv('rect', { class: 'bar-ok', x: L + fw, y, width: w - fw, height: rowH - 8, opacity: 0.35 }));
      if (fw > 0) svg.append(sv('rect', { class: 'bar-fail', x: L, y, width: fw, height: rowH - 8 }));
      svg.append(sv('text', { x: W - R + 4, y: y + 15, text: `${Math.round((c.fail / n) * 100)}% of ${n}` }));
    });
    return svg;
  }

  /* ---- views, theme, wiring ------------------------------------------- */
  function setView(name) {
    for (const b of document.querySelectorAll('.tab')) b.setAttribute('aria-pressed', String(b.dataset.view === name));
    show($('view-runs'), name === 'runs');
    show($('view-usage'), name === 'usage');
    if (name === 'usage') drawUsage().catch((e) => { $('usage-note').textContent = `Could not load: ${e.message}`; });
  }
  function applyTheme(t) {
    if (t) document.documentElement.setAttribute('data-theme', t);
    else document.documentElement.removeAttribute('data-theme');
    const dark = t ? t === 'dark' : matchMedia('(prefers-color-scheme: dark)').matches;
    $('theme').textContent = dark ? 'Light theme' : 'Dark theme';
  }
  function toggleTheme() {
    const cur = document.documentElement.getAttribute('data-theme') ||
      (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
    const next = cur === 'dark' ? 'light' : 'dark';
    try { localStorage.setItem('loom.console.theme', next); } catch (_) { /* private mode */ }
    applyTheme(next);
  }

  document.addEventListener('DOMContentLoaded', () => {
    let theme = null;
    try { theme = localStorage.getItem('loom.console.theme'); } catch (_) { theme = null; }
    applyTheme(theme);
    $('theme').addEventListener('click', toggleTheme);
    $('logout').addEventListener('click', () => logout());
    $('login-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const t = $('token').value.trim();
      $('token').value = '';
      if (t) login(t);
    });
    $('start-form').addEventListener('submit', startRun);
    $('state-filter').addEventListener('change', () => refreshRuns().catch(() => {}));
    $('session-filter').addEventListener('change', renderRuns);
    $('act-pause').addEventListener('click', () => act('pause'));
    $('act-resume').addEventListener('click', () => act('resume'));
    $('act-cancel').addEventListener('click', () => act('cancel', { reason: 'cancelled from the console' }));
    $('viewer-close').addEventListener('click', () => show($('viewer'), false));
    $('viewer-download').addEventListener('click', download);
    $('usage-refresh').addEventListener('click', () => setView('usage'));
    $('usage-by').addEventListener('change', () => setView('usage'));
    for (const b of document.querySelectorAll('.tab')) b.addEventListener('click', () => setView(b.dataset.view));
    document.addEventListener('keydown', (ev) => {
      if (ev.key === 'Escape' && !$('viewer').hidden) show($('viewer'), false);
    });
    const saved = sessionStorage.getItem(TOKEN_KEY);
    if (saved) login(saved);
    else $('token').focus();
  });
})();
