// receiver.mjs — a local OTLP/HTTP collector for Loom's telemetry tests.
// It takes POSTs to /v1/traces, /v1/metrics and /v1/logs on loopback and
// decodes each body with the official OpenTelemetry protobuf definitions
// (opentelemetry-proto, as generated for protobufjs in
// @opentelemetry/otlp-transformer): a JSON body is mapped to the proto
// message by the OTLP JSON rules, read with the official
// Export{Trace,Metrics,Logs}ServiceRequest's fromObject and checked with its
// verify; an application/x-protobuf body is decoded with its decode.
//
// The JSON must also be exactly what the proto defines: every field it
// names must exist in the message (an unknown field fails), and written the
// OTLP JSON way — lowerCamelCase names, trace and span ids in hex, enums as
// integers, 64-bit integers as decimal strings or numbers, every other
// value of the field's own type (fromObject would quietly coerce a number
// into a string field, so the body is compared with the message read back).
//
// What it decoded goes to the output file, flattened, as JSON lines:
// {signal, resource, span|metric|log}, or {signal, error} when the body
// breaks a rule (answered with 400).
//
// Usage: node receiver.mjs PORT_FILE OUT_FILE   (writes the port it bound)
import http from 'node:http';
import fs from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let root;
try {
  root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
} catch (e) {
  console.error(`receiver: the official OTLP definitions are missing (run scripts/deps.sh): ${e.message}`);
  process.exit(2);
}
const collector = root.opentelemetry.proto.collector;
const REQUESTS = {
  traces: collector.trace.v1.ExportTraceServiceRequest,
  metrics: collector.metrics.v1.ExportMetricsServiceRequest,
  logs: collector.logs.v1.ExportLogsServiceRequest,
};

const [portFile, outFile] = process.argv.slice(2);
const out = (o) => fs.appendFileSync(outFile, JSON.stringify(o) + '\n');

function check(cond, what) {
  if (!cond) throw new Error(what);
}

// The bytes fields OTLP JSON writes in hex (every other bytes field is
// base64, as in the proto3 JSON mapping), with their lengths in bytes.
const HEX_IDS = { traceId: 16, spanId: 8, parentSpanId: 8 };
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// OTLP JSON → the plain object fromObject takes: hex ids become bytes.
function toProtoObject(v, where) {
  if (Array.isArray(v)) return v.map((x, i) => toProtoObject(x, `${where}[${i}]`));
  if (!isObject(v)) return v;
  const o = {};
  for (const [k, x] of Object.entries(v)) {
    if (k in HEX_IDS && typeof x === 'string') {
      const n = HEX_IDS[k];
      // An empty parent id is "no parent"; a set id is exactly n bytes.
      check(x === '' ? k === 'parentSpanId' : new RegExp(`^[0-9a-fA-F]{${2 * n}}$`).test(x),
        `${where}.${k}: "${x}" is not ${2 * n} hex digits`);
      o[k] = Buffer.from(x, 'hex');
    } else o[k] = toProtoObject(x, `${where}.${k}`);
  }
  return o;
}

// The body against the message read back from it: `s` is toObject with
// 64-bit integers as strings, `n` with them as numbers, so a field is a
// 64-bit integer exactly where the two differ in type.
function sameAsProto(body, s, n, where) {
  if (Array.isArray(body)) {
    check(Array.isArray(s) && s.length === body.length, `${where}: not the repeated field the proto defines`);
    body.forEach((x, i) => sameAsProto(x, s[i], n[i], `${where}[${i}]`));
    return;
  }
  if (isObject(body)) {
    check(isObject(s), `${where}: an object where the proto has a scalar`);
    for (const [k, x] of Object.entries(body)) {
      check(k in s, `${where}.${k}: no such field in the proto`);
      if (k in HEX_IDS) {
        check(typeof x === 'string' && Buffer.from(s[k], 'base64').toString('hex') === x.toLowerCase(),
          `${where}.${k}: not a hex id`);
      } else sameAsProto(x, s[k], n[k], `${where}.${k}`);
    }
    return;
  }
  if (typeof s === 'string' && typeof n === 'number') {
    // A 64-bit integer: a decimal string, or a number that is exact.
    check((typeof body === 'string' && body === s) || (typeof body === 'number' && Number.isSafeInteger(body) && String(body) === s),
      `${where}: ${JSON.stringify(body)} is not a 64-bit integer (int64 as a decimal string or number)`);
    return;
  }
  check(typeof body === typeof s, `${where}: ${JSON.stringify(body)} is a ${typeof body}, the proto's field is a ${typeof s}${typeof s === 'number' && typeof body === 'string' ? ' (enums are integers in OTLP JSON)' : ''}`);
  check(body === s || (typeof s === 'number' && Number.isNaN(s) && Number.isNaN(body)),
    `${where}: ${JSON.stringify(body)} reads back as ${JSON.stringify(s)}`);
}

const READ_BACK = { enums: Number, bytes: String, arrays: true, json: true };

// A JSON body → the official message, or an exception naming the field.
function decodeJson(Type, text, signal) {
  let body;
  try { body = JSON.parse(text); } catch (e) { throw new Error(`body is not JSON: ${e.message}`); }
  check(isObject(body), 'body is not a JSON object');
  const message = Type.fromObject(toProtoObject(body, signal));
  const bad = Type.verify(message);
  check(bad === null, `${signal}: ${bad}`);
  sameAsProto(body, Type.toObject(message, { ...READ_BACK, longs: String }),
    Type.toObject(message, { ...READ_BACK, longs: Number }), signal);
  return message;
}

function decodeProtobuf(Type, bytes, signal) {
  const message = Type.decode(bytes);
  const bad = Type.verify(message);
  check(bad === null, `${signal}: ${bad}`);
  return message;
}

// The decoded message in OTLP JSON's shape again, for the flattening below.
function asOtlpJson(Type, message) {
  const hexIds = (v) => {
    if (Array.isArray(v)) return v.map(hexIds);
    if (!isObject(v)) return v;
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = k in HEX_IDS ? Buffer.from(x, 'base64').toString('hex') : hexIds(x);
    return o;
  };
  return hexIds(Type.toObject(message, { ...READ_BACK, longs: String }));
}

// An attribute list to a plain object; int64s become numbers, arrays JS arrays.
function attrs(list, where) {
  const o = {};
  for (const a of list || []) {
    check(a.value && Object.keys(a.value).length === 1, `${where}: attribute ${a.key} has no single value`);
    o[a.key] = value(a.value);
  }
  return o;
}
function value(v) {
  if ('intValue' in v) return Number(v.intValue);
  if ('arrayValue' in v) return (v.arrayValue.values || []).map(value);
  if ('kvlistValue' in v) return attrs(v.kvlistValue.values, 'kvlist');
  return Object.values(v)[0];
}

function traces(body) {
  for (const rs of body.resourceSpans) {
    const resource = attrs(rs.resource.attributes, 'resource');
    for (const ss of rs.scopeSpans) for (const s of ss.spans) {
      const w = `span ${s.name}`;
      check(s.traceId.length === 32 && s.spanId.length === 16, `${w}: no trace or span id`);
      check(BigInt(s.endTimeUnixNano) >= BigInt(s.startTimeUnixNano), `${w}: ends before it starts`);
      const events = s.events.map((e) => ({ name: e.name, attributes: attrs(e.attributes, `${w} event`) }));
      out({ signal: 'traces', resource, span: {
        traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || '', name: s.name,
        kind: s.kind, start: s.startTimeUnixNano, end: s.endTimeUnixNano,
        attributes: attrs(s.attributes, w), events, status: s.status || {} } });
    }
  }
}

function metrics(body) {
  for (const rm of body.resourceMetrics) {
    const resource = attrs(rm.resource.attributes, 'resource');
    for (const sm of rm.scopeMetrics) for (const m of sm.metrics) {
      const data = m.histogram || m.sum || m.gauge;
      check(data && data.dataPoints.length > 0, `metric ${m.name}: no data points`);
      const points = data.dataPoints.map((p) => {
        const q = { attributes: attrs(p.attributes, `metric ${m.name}`) };
        if (m.histogram) {
          check(p.bucketCounts.length === p.explicitBounds.length + 1, `metric ${m.name}: buckets`);
          q.count = Number(p.count); q.sum = p.sum;
        } else q.value = p.asDouble ?? Number(p.asInt);
        return q;
      });
      out({ signal: 'metrics', resource, metric: { name: m.name, unit: m.unit, kind: m.histogram ? 'histogram' : 'sum', points } });
    }
  }
}

function logs(body) {
  for (const rl of body.resourceLogs) {
    const resource = attrs(rl.resource.attributes, 'resource');
    for (const sl of rl.scopeLogs) for (const r of sl.logRecords) {
      out({ signal: 'logs', resource, log: {
        time: r.timeUnixNano, observedTime: r.observedTimeUnixNano,
        severityNumber: r.severityNumber, severityText: r.severityText,
        body: r.body ? value(r.body) : null, eventName: r.eventName,
        traceId: r.traceId, spanId: r.spanId, attributes: attrs(r.attributes, 'log') } });
    }
  }
}

const FLATTEN = { traces, metrics, logs };

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const signal = req.url.replace(/^\/v1\//, '');
    try {
      check(req.method === 'POST', `method ${req.method}`);
      const Type = REQUESTS[signal];
      check(Type, `unknown path ${req.url}`);
      const type = req.headers['content-type'] || '';
      const raw = Buffer.concat(chunks);
      let message;
      if (type.startsWith('application/json')) message = decodeJson(Type, raw.toString('utf8'), signal);
      else if (type.startsWith('application/x-protobuf')) message = decodeProtobuf(Type, raw, signal);
      else throw new Error(`content-type "${type}" is neither application/json nor application/x-protobuf`);
      FLATTEN[signal](asOtlpJson(Type, message));
      if (req.headers['x-test-token']) out({ signal: 'header', value: req.headers['x-test-token'] });
      if (type.startsWith('application/x-protobuf')) out({ signal: 'protobuf', bytes: raw.length });
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
