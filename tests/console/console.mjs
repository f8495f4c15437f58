// console.mjs — the run console's browser scenario (tests/e2e/console_browser.sh
// starts loom-serve and mockllm and runs this). Debian's Chromium, headless,
// through puppeteer-core. Environment: BASE (the server's origin), TOKEN (an
// approver's), OTHER_TOKEN (another tenant's), CHROMIUM, SHOTS (the output
// folder), CONSOLE_SHOTS_DIR (also copy the screenshots there; docs/console/). Prints "ok - …" per check and
// exits 1 on the first failure.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';

const BASE = process.env.BASE;
const TOKEN = process.env.TOKEN;
const SHOTS = process.env.SHOTS;
const COPY = process.env.CONSOLE_SHOTS_DIR || '';
const origin = new URL(BASE).origin;

let passed = 0;
function ok(what) { passed++; console.log(`ok - ${what}`); }
function must(cond, what) {
  if (!cond) throw new Error(`not ok - ${what}`);
  ok(what);
}

const profile = mkdtempSync(join(tmpdir(), 'loom-console-chromium-'));
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  userDataDir: profile,
  args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage',
    '--no-first-run', '--no-default-browser-check', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--metrics-recording-only',
    '--proxy-server=direct://', '--proxy-bypass-list=*'],
});

// Every request any page makes, for the same-origin check at the end.
const requests = [];
const consoleErrors = [];
async function newPage(context, width, height, name) {
  const page = await context.newPage();
  await page.setViewport({ width, height, deviceScaleFactor: 1 });
  page.on('request', (r) => requests.push({ page: name, url: r.url() }));
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(`${name}: ${m.text()}`); });
  page.on('pageerror', (e) => consoleErrors.push(`${name}: ${e.message}`));
  page.setDefaultTimeout(20000);
  return page;
}
async function shot(page, name, opts = {}) {
  const file = join(SHOTS, `${name}.png`);
  if (opts.element) {
    const h = await page.$(opts.element);
    await h.screenshot({ path: file });
  } else {
    await page.screenshot({ path: file, fullPage: !!opts.full });
  }
  if (COPY) copyFileSync(file, join(COPY, `${name}.png`));
}
// The runs list is re-rendered on every live update, so an item found by one
// CDP call can be detached by the next: find and click it in one page task.
async function openRun(page, runId) {
  await page.waitForSelector(`.run-item[data-run="${runId}"]`);
  await page.waitForFunction((id) => {
    const item = document.querySelector(`.run-item[data-run="${id}"]`);
    if (!item) return false;
    item.click();
    return true;
  }, {}, runId);
}
async function login(page, token) {
  await page.goto(`${BASE}/`, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#token');
  await page.type('#token', token);
  await page.keyboard.press('Enter');
}

try {
  const ctxA = await browser.createBrowserContext();
  const ctxB = await browser.createBrowserContext();
  const ctxC = await browser.createBrowserContext();
  const A = await newPage(ctxA, 1280, 900, 'A');
  const B = await newPage(ctxB, 390, 844, 'B');
  // The phone prefers the dark theme (so the screenshots show both).
  await B.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
  const C = await newPage(ctxC, 1280, 900, 'C');

  // A wrong token sees nothing: the login says so and no data is shown.
  const cStatuses = [];
  C.on('response', (r) => { const p = new URL(r.url()).pathname; if (!p.startsWith('/console/') && p !== '/' && p !== '/favicon.ico') cStatuses.push(r.status()); });
  await login(C, 'not-a-token-of-this-server');
  await C.waitForSelector('#login-error:not([hidden])');
  const cText = await C.$eval('#login-error', (n) => n.textContent);
  must(/does not know this token/.test(cText), 'a wrong token is told the server does not know it');
  must(await C.$eval('#app', (n) => n.hidden), 'a wrong token sees no runs view');
  must((await C.$$('.run-item')).length === 0, 'a wrong token sees no runs');
  must(cStatuses.length > 0 && cStatuses.every((s) => s === 401), `every API answer to the wrong token was a 401 (${cStatuses.join(',')})`);
  must(await C.evaluate(() => sessionStorage.length === 0), 'a refused token is not kept');

  // A logs in and starts a run from the page.
  await login(A, TOKEN);
  await A.waitForSelector('#app:not([hidden])');
  must(await A.evaluate((t) => sessionStorage.getItem('loom.console.token') === t, TOKEN),
    'the token is kept in sessionStorage');
  must(await A.evaluate(() => localStorage.getItem('loom.console.token') === null), 'and not in localStorage');
  await A.waitForFunction(() => document.querySelectorAll('#profile option').length >= 2);
  must((await A.$eval('#profile', (s) => [...s.options].map((o) => o.value).join(','))) === 'default,second,watching',
    'the profile picker lists the tenant\'s profiles');
  await A.type('#goal', 'Say hello, then write new.txt');
  await A.select('#profile', 'default');
  // Watch the answer grow: each distinct length the page shows.
  await A.evaluate(() => {
    window.__lens = [];
    const box = document.getElementById('answer');
    new MutationObserver(() => {
      const n = box.textContent.length;
      if (window.__lens[window.__lens.length - 1] !== n) window.__lens.push(n);
    }).observe(box, { childList: true, subtree: true, characterData: true });
  });
  await A.click('#start');
  await A.waitForSelector('#run:not([hidden])');
  const runId = await A.evaluate(() => /run=(run_[a-z0-9]+)/.exec(location.hash)[1]);
  must(/^run_/.test(runId), `the page opened the new run ${runId}`);
  await A.waitForFunction(() => document.getElementById('answer').textContent.includes('before I write anything'));
  const lens = await A.evaluate(() => window.__lens.filter((n) => n > 0));
  must(lens.length >= 4, `the tokens streamed in (the answer had ${lens.length} lengths: ${lens.slice(0, 8).join(',')}…)`);

  // The approval card appears in A.
  await A.waitForSelector('.approval button.approve');
  const q = await A.$eval('.approval .q', (n) => n.textContent);
  must(q.includes('echo hello-console'), `the approval card asks about the command ("${q}")`);
  must((await A.$eval('.approval .cmd', (n) => n.textContent)) === 'echo hello-console', 'and shows the command');
  await A.waitForSelector('.tool[data-tool="Bash"]');
  must(true, 'the Bash call has a tool card');
  await shot(A, 'approval-1280');

  // B, another browser at phone width, opens the same run from the list.
  await login(B, TOKEN);
  await openRun(B, runId);
  await B.waitForSelector('.approval button.approve');
  must(true, 'a second browser sees the pending approval');
  await B.evaluate(() => { window.__sameDocument = true; });
  await B.$eval('.approval', (n) => n.scrollIntoView());
  await shot(B, 'approval-390');

  // A approves by clicking (keyboard: the comment, then the button).
  await A.type('.approval textarea', 'fine from the console');
  await A.click('.approval button.approve');
  await A.waitForFunction(() => !document.querySelector('.approval'));
  must(true, 'the card leaves the approving page');
  await B.waitForFunction(() => !document.querySelector('.approval'), { timeout: 10000 });
  must(await B.evaluate(() => window.__sameDocument === true), 'the approval vanished for the second browser without a reload');

  // The run completes; its answer is markdown, its HTML text.
  await A.waitForFunction(() => document.getElementById('run-state').textContent === 'completed', { timeout: 30000 });
  must(true, 'the run completed');
  await A.waitForFunction(() => document.getElementById('answer').textContent.includes('cat new.txt'));
  must(await A.$eval('#answer', (n) => !!n.querySelector('h4, h3') && !!n.querySelector('strong') && n.querySelectorAll('li').length === 2 && !!n.querySelector('pre code')),
    'the answer is rendered as markdown (heading, bold, list, code block)');
  must(await A.$eval('#answer', (n) => !n.querySelector('img, script') && n.textContent.includes('<img src=x onerror=alert(1)>')),
    'HTML in the answer stays text');
  const lens2 = await A.evaluate(() => window.__lens.length);
  must(lens2 > lens.length + 4, `the final reply streamed too (${lens2} lengths in all)`);
  await A.waitForFunction(() => document.querySelector('.tool[data-tool="Write"][data-done]'));
  must(await A.$eval('.tool[data-tool="Bash"]', (n) => n.getAttribute('data-done') === 'ok' && /hello-console/.test(n.querySelector('.out').textContent)),
    'the Bash card has its status and its folded output');
  must(await A.$eval('.tool[data-tool="Write"] .diff', (n) => n.textContent.includes('+fresh')), 'the Write card shows its diff');
  const usage = await A.$eval('#run-usage', (n) => n.textContent);
  must(/input tokens\s*[\d,]*[1-9]/.test(usage) && /cost\s*\$\d/.test(usage), `usage and cost are shown (${usage.replace(/\s+/g, ' ').trim()})`);
  await A.$eval('#run', (n) => n.scrollIntoView());
  await shot(A, 'run-1280', { full: true });

  // The patch in the diff viewer.
  await A.waitForSelector('.artifact[data-name="patch.diff"]', { timeout: 15000 });
  await A.click('.artifact[data-name="patch.diff"]');
  await A.waitForSelector('#viewer:not([hidden]) .diff');
  const diff = await A.$eval('#viewer .diff', (n) => n.textContent);
  must(diff.includes('+++ b/new.txt') && diff.includes('+from the console'), 'patch.diff opens in the diff viewer');
  must((await A.$$('#viewer .diff .add')).length >= 2, 'its added lines are marked');
  await shot(A, 'diff-1280', { element: '#viewer' });
  // Download: the browser saves the bytes the artifact route serves.
  const downloads = mkdtempSync(join(tmpdir(), 'loom-console-downloads-'));
  const cdp = await browser.target().createCDPSession();
  await cdp.send('Browser.setDownloadBehavior',
    { behavior: 'allow', downloadPath: downloads, browserContextId: ctxA.id, eventsEnabled: true });
  await A.click('#viewer-download');
  const saved = join(downloads, 'patch.diff');
  for (let i = 0; i < 100 && !(existsSync(saved) && !readdirSync(downloads).some((f) => f.endsWith('.crdownload'))); i++)
    await new Promise((r) => setTimeout(r, 100));
  must(existsSync(saved), `Download saved patch.diff (${readdirSync(downloads).join(',') || 'nothing'})`);
  const served = Buffer.from(await (await fetch(`${BASE}/runs/${runId}/artifacts/patch.diff`,
    { headers: { Authorization: `Bearer ${TOKEN}` } })).arrayBuffer());
  const got = readFileSync(saved);
  must(served.length > 0 && got.equals(served), `the downloaded bytes are the artifact's (${got.length} of ${served.length} bytes)`);
  rmSync(downloads, { recursive: true, force: true });
  // The JSON viewer for summary.json or result.json, when the run has one.
  const jsonName = await A.evaluate(() => {
    const b = [...document.querySelectorAll('.artifact')].find((x) => /\.json$/.test(x.dataset.name));
    return b ? b.dataset.name : null;
  });
  if (jsonName) {
    await A.click(`.artifact[data-name="${jsonName}"]`);
    await A.waitForSelector('#viewer:not([hidden]) .json details');
    must(true, `${jsonName} opens in the JSON viewer`);
  }

  // A second run, with the other profile: its approval expires unanswered
  // (the card says so) and a Bash call fails.
  await A.type('#goal', 'Now count the files');
  await A.select('#profile', 'second');
  const before = runId;
  await A.click('#start');
  await A.waitForFunction((id) => !location.hash.includes(id), {}, before);
  await A.waitForSelector('.approval.expired', { timeout: 15000 });
  const exp = await A.$eval('.approval.expired', (n) => n.textContent);
  must(/expired/i.test(exp) && !(/Approve/.test(exp)), 'an expired approval says so and offers no buttons');
  await A.waitForFunction(() => ['completed', 'failed'].includes(document.getElementById('run-state').textContent), { timeout: 20000 });
  await A.waitForSelector('.tool[data-done="failed"]');
  must(true, 'the failed Bash call is marked failed');
  await A.waitForSelector('#agents li[data-agent]');
  const agent = await A.$eval('#agents li[data-agent]', (n) => n.textContent);
  must(/counter/.test(agent), `the sub-agent is in the agent tree (${agent.trim()})`);
  must((await A.$$('.run-item')).length === 2, 'the runs list has both runs');
  await A.select('#state-filter', 'completed');
  await A.waitForFunction((id) => [...document.querySelectorAll('.run-item')].every((b) => b.querySelector('.state').textContent === 'completed'), {}, before);
  must(true, 'the state filter narrows the list');
  await A.select('#state-filter', '');

  // Usage charts.
  await A.click('.tab[data-view="usage"]');
  await A.waitForFunction(() => document.querySelectorAll('#charts svg').length === 5);
  must(await A.$eval('#charts', (n) => n.querySelectorAll('rect').length >= 3), 'the usage charts are drawn as inline SVG');
  const legend = await A.$eval('#charts', (n) => n.textContent);
  must(legend.includes('default') && legend.includes('second'), 'by profile, both profiles are in the charts');
  await A.select('#usage-by', 'model');
  await A.waitForFunction(() => document.getElementById('charts').textContent.includes('claude-haiku-4-5'));
  must(true, 'by model, the runs\' models are (from GET /usage)');
  const costs = () => [...document.querySelectorAll('.run-item .meta')].map((n) => n.textContent).join(' | ');
  await A.waitForFunction(() => ([...document.querySelectorAll('.run-item .meta')].map((n) => n.textContent).join(' | ')
    .match(/\$\d/g) || []).length === 2, { timeout: 15000 }).catch(() => {});
  const runCost = await A.evaluate(costs);
  must((runCost.match(/\$\d/g) || []).length === 2, `the runs list shows both runs' cost (${runCost})`);
  await A.select('#usage-by', 'agent_profile');
  await A.waitForFunction(() => document.getElementById('charts').textContent.includes('second') && document.querySelectorAll('#charts svg').length === 5);
  await shot(A, 'usage-1280', { full: true });

  // The phone-width views in B: the run (it saw the end), the diff, usage.
  await B.waitForFunction(() => document.getElementById('run-state').textContent === 'completed', { timeout: 15000 });
  must(true, 'the second browser saw the run complete');
  await shot(B, 'run-390', { full: true });
  await B.waitForSelector('.artifact[data-name="patch.diff"]');
  await B.click('.artifact[data-name="patch.diff"]');
  await B.waitForSelector('#viewer:not([hidden]) .diff');
  await shot(B, 'diff-390', { element: '#viewer' });
  must(await B.evaluate(() => document.documentElement.scrollWidth <= 390 + 1), 'nothing is wider than the phone');
  await B.click('.tab[data-view="usage"]');
  await B.waitForFunction(() => document.querySelectorAll('#charts svg').length === 5);
  await shot(B, 'usage-390', { full: true });

  // A third run, cancelled from the page while it waits for its approval:
  // the card goes with it.
  await A.click('.tab[data-view="runs"]');
  await A.type('#goal', 'Say hello again, then write new.txt');
  await A.select('#profile', 'default');
  await A.click('#start');
  await A.waitForFunction((id) => !location.hash.includes(id) && document.getElementById('run-goal').textContent.includes('again'), {}, runId);
  await A.waitForSelector('.approval button.approve');
  await A.waitForFunction(() => !document.getElementById('act-pause').disabled || !document.getElementById('act-cancel').disabled);
  await A.click('#act-cancel');
  await A.waitForFunction(() => document.getElementById('run-state').textContent === 'cancelled', { timeout: 15000 });
  must(true, 'Cancel on the page cancels the run');
  await A.waitForFunction(() => !document.querySelector('.approval'), { timeout: 10000 });
  must(true, 'and its approval card goes with it');
  must(await A.$eval('#act-cancel', (b) => b.disabled) && await A.$eval('#act-resume', (b) => b.disabled),
    'an ended run offers neither Cancel nor Resume');

  // A fourth run writes a plan (TodoWrite) and is paused, then resumed,
  // from the page; the working memory panel follows it.
  await A.type('#goal', 'plan-console: plan the work');
  await A.select('#profile', 'default');
  await A.click('#start');
  await A.waitForFunction(() => document.getElementById('run-goal').textContent.includes('plan-console'));
  const planRun = await A.evaluate(() => /run=(run_[a-z0-9]+)/.exec(location.hash)[1]);
  await A.waitForSelector('#working-plan li[data-content="draft-the-plan"]');
  const plan = await A.$$eval('#working-plan li', (ls) => ls.map((l) => `${l.dataset.content}:${l.dataset.status}`).join(','));
  must(plan === 'draft-the-plan:in_progress,check-the-panel:pending', `the side panel shows the scripted plan (${plan})`);
  must(await A.$eval('#working-plan li[data-status="in_progress"] .text', (n) => n.textContent) === 'Drafting the plan',
    'the item in progress reads as its activeForm');
  const turn = await A.$eval('#working-dash [data-k="turn"]', (n) => n.textContent);
  must(/^[1-9]\d*$/.test(turn), `the dashboard shows the turn (${turn})`);
  must(/ of [\d,]+ \(\d+%\)/.test(await A.$eval('#working-dash [data-k="tokens"]', (n) => n.textContent)),
    'and the context tokens of the window');
  must(await A.$eval('#working-dash meter', (m) => Number(m.max) > 0 && Number(m.value) > 0), 'as a gauge');
  const [mainBox, sideBox] = await A.evaluate(() => ['#answer', '#working'].map((q) => {
    const r = document.querySelector(q).getBoundingClientRect(); return { left: r.left, right: r.right, top: r.top };
  }));
  must(sideBox.left >= mainBox.right, 'at 1280 px the panel is beside the transcript');
  // Pause while its second turn streams: the badge says paused, then Resume.
  await A.waitForFunction(() => !document.getElementById('act-pause').disabled);
  await A.click('#act-pause');
  await A.waitForFunction(() => document.getElementById('run-state').textContent === 'paused', { timeout: 15000 });
  must(true, 'Pause on the page pauses the run (the state badge says paused)');
  must(await A.$eval('#act-resume', (b) => !b.disabled) && await A.$eval('#act-pause', (b) => b.disabled),
    'a paused run offers Resume, not Pause');
  await A.click('#act-resume');
  await A.waitForFunction(() => document.getElementById('run-state').textContent !== 'paused');
  must(true, `Resume on the page resumes it (${await A.$eval('#run-state', (n) => n.textContent)})`);
  await A.waitForFunction(() => document.getElementById('run-state').textContent === 'completed', { timeout: 20000 });
  await A.waitForFunction(() => document.getElementById('answer').textContent.includes('The plan is done'));
  must(true, 'the resumed run completes');
  await A.waitForFunction(() => document.querySelector('#working-plan li[data-content="check-the-panel"][data-status="in_progress"]'));
  must(await A.$eval('#working-plan li[data-content="draft-the-plan"]', (n) => n.dataset.status) === 'completed',
    'the panel follows the plan\'s second TodoWrite');
  await shot(A, 'working-1280', { full: true });
  // At phone width it is below the transcript, folded; the keyboard opens it.
  await B.click('.tab[data-view="runs"]');
  await openRun(B, planRun);
  await B.waitForFunction(() => document.getElementById('run-goal').textContent.includes('plan-console'));
  await B.waitForSelector('#working-plan li[data-content="check-the-panel"]');
  must(await B.$eval('#working-fold', (d) => !d.open), 'at 390 px the panel starts folded');
  await B.focus('#working-fold summary');
  await B.keyboard.press('Enter');
  must(await B.$eval('#working-fold', (d) => d.open), 'Enter on its summary unfolds it');
  must(await B.$eval('#working-plan', (n) => n.offsetHeight > 0 && n.textContent.includes('Checking the panel')),
    'and shows the plan');
  const [bMain, bSide] = await B.evaluate(() => ['#answer', '#working'].map((q) => {
    const r = document.querySelector(q).getBoundingClientRect(); return { bottom: r.bottom, top: r.top };
  }));
  must(bSide.top >= bMain.bottom, 'below the transcript');
  must(await B.evaluate(() => document.documentElement.scrollWidth <= 390 + 1), 'and no wider than the phone');
  await B.$eval('#working', (n) => n.scrollIntoView());
  await shot(B, 'working-390');

  // A fifth run, of the profile with a heartbeat block: its Bash call
  // writes a file and sleeps, the filesystem watch sees the change, and the
  // page shows the heartbeat.event in the timeline after the Bash card and
  // the event in the panel. The panel draws only the newest state, so every
  // event row it ever shows is recorded as it appears.
  await A.evaluate(() => {
    window.__panelEvents = new Set();
    const box = document.getElementById('working-events');
    new MutationObserver(() => {
      for (const li of box.querySelectorAll('li[data-event]')) window.__panelEvents.add(li.textContent);
    }).observe(box, { childList: true, subtree: true, characterData: true });
  });
  await A.type('#goal', 'heartbeat-console: change a file and wait');
  await A.select('#profile', 'watching');
  await A.click('#start');
  await A.waitForFunction(() => document.getElementById('run-goal').textContent.includes('heartbeat-console'));
  await A.waitForFunction(() => document.getElementById('run-state').textContent === 'completed', { timeout: 30000 });
  await A.waitForFunction(() => document.getElementById('answer').textContent.includes('The watch saw it'));
  must(true, 'the run of the profile with a heartbeat completes');
  await A.waitForSelector('#tools li.beat');
  const beats = await A.$$eval('#tools li.beat', (ls) => ls.map((l) => l.textContent));
  must(beats.some((t) => /heartbeat · high/.test(t) && /filesystem/.test(t) && /watched\.txt/.test(t)),
    `the timeline shows the filesystem watch's heartbeat event (${beats[0]})`);
  const order = await A.$$eval('#tools > li', (ls) => ls.map((l) => (l.classList.contains('beat') ? 'beat' : l.dataset.tool || '?')));
  must(order.indexOf('Bash') >= 0 && order.lastIndexOf('beat') > order.indexOf('Bash'),
    `after the Bash card that caused it (${order.join(',')})`);
  must(/watched\.txt/.test(await A.$eval('#heartbeat', (n) => n.textContent)), 'the heartbeat card lists it too');
  const seen = await A.evaluate(() => [...window.__panelEvents]);
  must(seen.some((t) => /^high /.test(t) && /filesystem/.test(t) && /watched\.txt/.test(t) && /pending|acknowledged/.test(t)),
    `the working-memory panel showed the event with its state (${seen.join(' | ') || 'nothing'})`);
  must(/last tick \d/.test(await A.$eval('#working-dash [data-k="heartbeat"]', (n) => n.textContent)),
    'and the dashboard the heartbeat\'s last tick');
  await shot(A, 'heartbeat-1280', { full: true });

  // Another tenant's token sees none of it, not even by the run's address.
  await login(C, process.env.OTHER_TOKEN);
  await C.waitForSelector('#app:not([hidden])');
  await C.waitForSelector('#runs-empty:not([hidden])');
  must((await C.$$('.run-item')).length === 0, 'another tenant sees no runs in the list');
  await C.goto(`${BASE}/#run=${runId}`, { waitUntil: 'domcontentloaded' });
  await C.reload({ waitUntil: 'networkidle0' });
  await C.waitForSelector('#app:not([hidden])');
  must(await C.$eval('#run', (n) => n.hidden) && !(await C.content()).includes('hello-console'),
    'nor the run at its address (the server answers 404)');

  // The theme toggle (a keyboard press on a focused button).
  await A.focus('#theme');
  await A.keyboard.press('Enter');
  const theme = await A.evaluate(() => document.documentElement.getAttribute('data-theme'));
  must(theme === 'dark' || theme === 'light', `the theme toggle sets ${theme}`);

  // Nothing but the server's origin.
  const foreign = requests.filter((r) => new URL(r.url).origin !== origin);
  must(requests.length > 10 && foreign.length === 0,
    `all ${requests.length} requests went to ${origin}` + (foreign.length ? `; not: ${foreign.map((r) => r.url).join(' ')}` : ''));
  must(requests.some((r) => r.url.includes(`/runs/${runId}/stream`)), 'the run was followed over its event stream');
  must(consoleErrors.filter((e) => !/Failed to load resource/.test(e)).length === 0,
    `no script errors (${consoleErrors.join(' | ')})`);
  console.log(`browser checks: all ${passed} held`);
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
} catch (e) {
  console.error(e && e.stack ? e.stack : String(e));
  console.log(`${e.message}`);
  try { await browser.close(); } catch (_) { /* already gone */ }
  rmSync(profile, { recursive: true, force: true });
  process.exit(1);
}
