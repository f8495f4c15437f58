// prom.mjs — a strict parser of the Prometheus text exposition format 0.0.4
// (what GET /metrics answers), for the tests: anything the format does not
// allow throws, naming the line. Checked beyond the grammar: a family's
// TYPE comes before its samples and once; a family's samples are together;
// no sample twice (same name and labels); a sample's name is its family's
// (a histogram's NAME_bucket with le, NAME_sum, NAME_count); a histogram's
// buckets are cumulative, in increasing le, end at +Inf, and +Inf equals
// its _count.
// parse(text) → Map family → { type, help, samples: [{ name, labels, value }] }.

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function fail(n, line, why) {
  throw new Error(`metrics line ${n}: ${why}: ${JSON.stringify(line)}`);
}

function number(s, n, line) {
  if (s === 'NaN' || s === '+Inf' || s === '-Inf') return s === 'NaN' ? NaN : s === '+Inf' ? Infinity : -Infinity;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) fail(n, line, `"${s}" is not a number`);
  return Number(s);
}

// The labels of `{…}` starting at line[i] (after '{'); returns [labels, next index].
function labels(line, i, n) {
  const out = {};
  for (;;) {
    if (line[i] === '}') return [out, i + 1];
    const m = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(line.slice(i));
    if (!m) fail(n, line, 'a label name was expected');
    const key = m[0];
    i += key.length;
    if (line[i] !== '=' || line[i + 1] !== '"') fail(n, line, `label ${key} has no ="value"`);
    i += 2;
    let v = '';
    for (;; i++) {
      if (i >= line.length) fail(n, line, `label ${key}'s value is not closed`);
      const c = line[i];
      if (c === '"') break;
      if (c === '\\') {
        const e = line[++i];
        if (e === '\\') v += '\\';
        else if (e === '"') v += '"';
        else if (e === 'n') v += '\n';
        else fail(n, line, `label ${key} has the escape \\${e}`);
      } else v += c;
    }
    i++;
    if (key in out) fail(n, line, `label ${key} twice`);
    if (!LABEL.test(key) || key.startsWith('__')) fail(n, line, `label name ${key}`);
    out[key] = v;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') fail(n, line, 'a comma or } was expected after a label');
  }
}

function familyOf(name, families) {
  if (families.has(name)) return name;
  for (const suf of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suf)) {
      const base = name.slice(0, -suf.length);
      const f = families.get(base);
      if (f && (f.type === 'histogram' || (f.type === 'summary' && suf !== '_bucket'))) return base;
    }
  }
  return null;
}

export function parse(text) {
  if (text.length && !text.endsWith('\n')) throw new Error('metrics: the last line has no newline');
  const families = new Map();
  const seen = new Set();
  const closed = new Set();
  let current = null;
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((line, k) => {
    const n = k + 1;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // another comment: allowed
      const [, what, name, rest] = m;
      if (!NAME.test(name)) fail(n, line, `metric name ${name}`);
      const f = families.get(name) || { type: null, help: null, samples: [] };
      if (what === 'TYPE') {
        if (!TYPES.has(rest)) fail(n, line, `type ${rest}`);
        if (f.type) fail(n, line, `a second TYPE for ${name}`);
        if (f.samples.length) fail(n, line, `TYPE of ${name} after its samples`);
        f.type = rest;
      } else {
        if (f.help !== null) fail(n, line, `a second HELP for ${name}`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) fail(n, line, 'HELP has an escape other than \\\\ and \\n');
        f.help = rest;
      }
      families.set(name, f);
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)/.exec(line);
    if (!m) fail(n, line, 'not a sample');
    const name = m[1];
    let i = name.length;
    let lab = {};
    if (line[i] === '{') [lab, i] = labels(line, i + 1, n);
    if (line[i] !== ' ') fail(n, line, 'a space was expected before the value');
    const parts = line.slice(i + 1).split(' ');
    if (parts.length < 1 || parts.length > 2 || parts[0] === '') fail(n, line, 'the value (and an optional timestamp) was expected');
    const value = number(parts[0], n, line);
    if (parts.length === 2 && !/^-?\d+$/.test(parts[1])) fail(n, line, 'the timestamp is not an integer');
    const fam = familyOf(name, families);
    if (!fam || !families.get(fam).type) fail(n, line, `${name} has no TYPE before it`);
    if (fam !== current) {
      if (closed.has(fam)) fail(n, line, `the samples of ${fam} are not together`);
      if (current) closed.add(current);
      current = fam;
    }
    const f = families.get(fam);
    if (f.type === 'histogram' && name === fam) fail(n, line, `a histogram's sample is ${fam}_bucket, _sum or _count`);
    if (f.type === 'histogram' && name.endsWith('_bucket') && !('le' in lab)) fail(n, line, 'a bucket without le');
    const key = name + JSON.stringify(Object.entries(lab).sort());
    if (seen.has(key)) fail(n, line, 'the same sample twice');
    seen.add(key);
    f.samples.push({ name, labels: lab, value });
  });
  for (const [fam, f] of families) {
    if (f.type !== 'histogram') continue;
    const groups = new Map();
    for (const s of f.samples) {
      const { le, ...rest } = s.labels;
      const g = JSON.stringify(Object.entries(rest).sort());
      if (!groups.has(g)) groups.set(g, { buckets: [], count: null });
      if (s.name === `${fam}_bucket`) groups.get(g).buckets.push([number(le, 0, le), s.value]);
      if (s.name === `${fam}_count`) groups.get(g).count = s.value;
    }
    for (const [g, { buckets, count }] of groups) {
      for (let k = 1; k < buckets.length; k++) {
        if (!(buckets[k][0] > buckets[k - 1][0])) throw new Error(`metrics: ${fam}${g}: le not increasing`);
        if (buckets[k][1] < buckets[k - 1][1]) throw new Error(`metrics: ${fam}${g}: buckets not cumulative`);
      }
      const last = buckets[buckets.length - 1];
      if (!last || last[0] !== Infinity) throw new Error(`metrics: ${fam}${g}: no le="+Inf" bucket`);
      if (count === null || last[1] !== count) throw new Error(`metrics: ${fam}${g}: +Inf bucket ${last[1]} is not _count ${count}`);
    }
  }
  return families;
}

// The value of family's sample whose labels include want (exactly one must match).
export function value(families, name, want = {}) {
  const fam = familyOf(name, families);
  const f = fam && families.get(fam);
  if (!f) throw new Error(`metrics: no ${name}`);
  const hits = f.samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
  if (hits.length !== 1) throw new Error(`metrics: ${hits.length} samples of ${name} ${JSON.stringify(want)}`);
  return hits[0].value;
}
