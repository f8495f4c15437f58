// receiver.mjs — a local OTLP/HTTP JSON collector for Loom's telemetry
// tests: it takes POSTs to /v1/traces, /v1/metrics and /v1/logs on
// loopback, checks each body against the OTLP JSON mapping (hex trace and
// span ids of 32 and 16 digits, 64-bit integers as decimal strings, one
// value kind per attribute) and appends what it received, flattened, as
// JSON lines to the output file: {signal, resource, span|metric|log} or
// {signal, error} when the body breaks the mapping (answered with 400).
//
// Usage: node receiver.mjs PORT_FILE OUT_FILE   (writes the port it bound)
import http from 'node:http';
import fs from 'node:fs';

const [portFile, outFile] = process.argv.slice(2);
const out = (o) => fs.appendFileSync(outFile, JSON.stringify(o) + '\n');

const hex = (n) => (v) => typeof v === 'string' && new RegExp(`^[0-9a-f]{${n}}$`).test(v);
const decimal = (v) => typeof v === 'string' && /^[0-9]+$/.test(v);
const VALUE_KINDS = ['stringValue', 'intValue', 'doubleValue', 'boolValue', 'arrayValue', 'kvlistValue', 'bytesValue'];

function check(cond, what) {
  if (!cond) throw new Error(what);
}

// An OTLP attribute list to a plain object; int64 strings stay strings
// checked as decimal, arrays become JS arrays.
function attrs(list, where) {
  check(Array.isArray(list), `${where}: attributes is not an array`);
  const o = {};
  for (const a of list) {
    check(typeof a.key === 'string' && a.value && typeof a.value === 'object', `${where}: attribute without key/value`);
    const kinds = Object.keys(a.value);
    check(kinds.length === 1 && VALUE_KINDS.includes(kinds[0]), `${where}: attribute ${a.key} has value kinds ${kinds}`);
    o[a.key] = value(a.value, `${where}.${a.key}`);
  }
  return o;
}

function value(v, where) {
  if ('intValue' in v) {
    check(decimal(v.intValue), `${where}: intValue ${v.intValue} is not a decimal string`);
    return Number(v.intValue);
  }
  if ('arrayValue' in v) return (v.arrayValue.values || []).map((x, i) => value(x, `${where}[${i}]`));
  if ('stringValue' in v) { check(typeof v.stringValue === 'string', `${where}: stringValue`); return v.stringValue; }
  if ('doubleValue' in v) { check(typeof v.doubleValue === 'number', `${where}: doubleValue`); return v.doubleValue; }
  if ('boolValue' in v) { check(typeof v.boolValue === 'boolean', `${where}: boolValue`); return v.boolValue; }
  return v;
}

function traces(body) {
  for (const rs of body.resourceSpans) {
    const resource = attrs(rs.resource.attributes, 'resource');
    for (const ss of rs.scopeSpans) for (const s of ss.spans) {
      const w = `span ${s.name}`;
      check(hex(32)(s.traceId), `${w}: traceId ${s.traceId}`);
      check(hex(16)(s.spanId), `${w}: spanId ${s.spanId}`);
      check(s.parentSpanId === undefined || s.parentSpanId === '' || hex(16)(s.parentSpanId), `${w}: parentSpanId`);
      check(decimal(s.startTimeUnixNano) && decimal(s.endTimeUnixNano), `${w}: times`);
      check(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano), `${w}: ends before it starts`);
      check(Number.isInteger(s.kind) && s.kind >= 0 && s.kind <= 5, `${w}: kind`);
      const events = (s.events || []).map((e) => {
        check(decimal(e.timeUnixNano) && typeof e.name === 'string', `${w}: event`);
        return { name: e.name, attributes: attrs(e.attributes || [], `${w} event`) };
      });
      out({ signal: 'traces', resource, span: {
        traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || '', name: s.name,
        kind: s.kind, start: s.startTimeUnixNano, end: s.endTimeUnixNano,
        attributes: attrs(s.attributes || [], w), events, status: s.status || {} } });
    }
  }
}

function metrics(body) {
  for (const rm of body.resourceMetrics) {
    const resource = attrs(rm.resource.attributes, 'resource');
    for (const sm of rm.scopeMetrics) for (const m of sm.metrics) {
      const data = m.histogram || m.sum || m.gauge;
      check(data && Array.isArray(data.dataPoints), `metric ${m.name}: no data points`);
      const points = data.dataPoints.map((p) => {
        const q = { attributes: attrs(p.attributes || [], `metric ${m.name}`) };
        if (m.histogram) {
          check(decimal(p.count), `metric ${m.name}: count`);
          check(p.bucketCounts.length === p.explicitBounds.length + 1, `metric ${m.name}: buckets`);
          q.count = Number(p.count); q.sum = p.sum;
        } else q.value = p.asDouble ?? Number(p.asInt);
        return q;
      });
      out({ signal: 'metrics', resource, metric: { name: m.name, unit: m.unit, kind: m.histogram ? 'histogram' : 'sum', points } });
    }
  }
}

const server = http.createServer((req, res) => {
  let chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const signal = req.url.replace(/^\/v1\//, '');
    try {
      check(req.method === 'POST', `method ${req.method}`);
      check((req.headers['content-type'] || '').startsWith('application/json'), 'content-type');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (signal === 'traces') traces(body);
      else if (signal === 'metrics') metrics(body);
      else throw new Error(`unknown path ${req.url}`);
      if (req.headers['x-test-token']) out({ signal: 'header', value: req.headers['x-test-token'] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    } catch (e) {
      out({ signal, error: String(e.message || e) });
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(e.message || e) }));
    }
  });
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
