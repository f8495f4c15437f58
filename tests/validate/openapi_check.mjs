// openapi_check.mjs — loom serve's OpenAPI document as a test oracle.
//
// As a program:
//   node openapi_check.mjs doc OPENAPI.json
//       the document is a valid OpenAPI 3.1 document
//       (@seriousme/openapi-schema-validator), and every $ref resolves.
//   node openapi_check.mjs response OPENAPI.json METHOD PATH STATUS BODY_FILE [CONTENT_TYPE]
//       the answer (status, body) of METHOD PATH is one the document allows:
//       the status is documented for the route and a JSON body matches its
//       schema (ajv, JSON Schema 2020-12, formats checked by ajv-formats).
//       PATH is the path as requested (/runs/run_x:cancel?wait=1 is fine).
// Exit 0 when valid, 1 with the reasons on stderr otherwise.
//
// As a module (tests/serve/client.mjs validates every response with it):
//   const v = await loadOpenApi(pathOrObject);
//   v.checkResponse(method, path, status, bodyText, contentType)
//       → { ok: boolean, errors: [string], route: "/runs/{id}" | null }
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const DOC_ID = "loom-openapi.json";

// A template path as a regexp: a parameter is one segment without ':' (the
// :action suffix is literal text after it, e.g. /runs/{id}:cancel).
function templateRegexp(template) {
  const parts = template.split(/(\{[^}]+\})/).map((p) =>
    p.startsWith("{") ? "[^/:]+" : p.replace(/[.*+?^$()|[\]\\]/g, "\\$&"),
  );
  return new RegExp("^" + parts.join("") + "$");
}

function deref(doc, obj) {
  let o = obj;
  for (let i = 0; o && o.$ref && i < 16; i++) {
    const ptr = o.$ref.replace(/^#\//, "").split("/");
    o = ptr.reduce((at, k) => (at ? at[k.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined), doc);
  }
  return o;
}

export async function loadOpenApi(source) {
  const doc = typeof source === "string" ? JSON.parse(readFileSync(source, "utf8")) : source;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat("binary", true);
  ajv.addSchema(doc, DOC_ID);
  const routes = Object.keys(doc.paths || {}).map((t) => ({ template: t, re: templateRegexp(t) }));
  const cache = new Map();
  function validatorFor(pointer) {
    if (!cache.has(pointer)) cache.set(pointer, ajv.compile({ $ref: DOC_ID + "#" + pointer }));
    return cache.get(pointer);
  }
  function checkResponse(method, path, status, bodyText, contentType) {
    const errors = [];
    const bare = path.split("?")[0].split("#")[0];
    const route = routes.find((r) => r.re.test(bare));
    if (!route) return { ok: false, errors: [`no documented path matches ${bare}`], route: null };
    const m = method.toLowerCase();
    const op = doc.paths[route.template][m];
    // A method the path does not take: the 405 envelope (not per operation).
    if (!op) {
      if (status !== 405) errors.push(`${method} ${route.template} is not documented, and the answer was ${status}, not 405`);
      else checkJson("/components/schemas/Error", bodyText, errors);
      return { ok: errors.length === 0, errors, route: route.template };
    }
    const key = String(status);
    const respKey = op.responses[key] ? key : op.responses.default ? "default" : null;
    if (!respKey) {
      errors.push(`${method} ${route.template}: status ${status} is not documented`);
      return { ok: false, errors, route: route.template };
    }
    const resp = deref(doc, op.responses[respKey]);
    const content = resp.content || {};
    const type = (contentType || "application/json").split(";")[0].trim().toLowerCase();
    const mediaKey = content[type] ? type : content["*/*"] ? "*/*" : null;
    if (!mediaKey) {
      if (Object.keys(content).length)
        errors.push(`${method} ${route.template} ${status}: content type ${type} is not documented`);
      return { ok: errors.length === 0, errors, route: route.template };
    }
    if (mediaKey === "application/json") {
      const refPtr = op.responses[respKey].$ref
        ? op.responses[respKey].$ref.slice(1) + "/content/application~1json/schema"
        : `/paths/${route.template.replace(/~/g, "~0").replace(/\//g, "~1")}/${m}/responses/${respKey}/content/application~1json/schema`;
      checkJson(refPtr, bodyText, errors);
    }
    return { ok: errors.length === 0, errors, route: route.template };
  }
  function checkJson(pointer, bodyText, errors) {
    let body;
    try {
      body = typeof bodyText === "string" ? JSON.parse(bodyText) : bodyText;
    } catch (e) {
      errors.push(`the body is not JSON: ${e.message}`);
      return;
    }
    const validate = validatorFor(pointer);
    if (!validate(body))
      for (const e of validate.errors) errors.push(`${e.instancePath || "/"} ${e.message} (${e.schemaPath})`);
  }
  return { doc, checkResponse };
}

export async function checkDocument(file) {
  const { Validator } = await import("@seriousme/openapi-schema-validator");
  const v = new Validator();
  const res = await v.validate(file);
  const errors = [];
  if (!res.valid) errors.push(...[].concat(res.errors).map((e) => JSON.stringify(e)));
  if (v.version && !String(v.version).startsWith("3.1")) errors.push(`version ${v.version}, not 3.1`);
  // Every $ref resolves, and every schema compiles.
  const doc = JSON.parse(readFileSync(file, "utf8"));
  const walk = (o, at) => {
    if (!o || typeof o !== "object") return;
    if (typeof o.$ref === "string" && !deref(doc, { $ref: o.$ref }))
      errors.push(`${at}: $ref ${o.$ref} does not resolve`);
    for (const [k, v2] of Object.entries(o)) walk(v2, `${at}/${k}`);
  };
  walk(doc, "#");
  try {
    const { checkResponse } = await loadOpenApi(doc);
    checkResponse("GET", "/healthz", 200, '{"status":"ok","version":"0"}', "application/json");
  } catch (e) {
    errors.push(`a schema does not compile: ${e.message}`);
  }
  return errors;
}

async function main(argv) {
  const [cmd, file, ...rest] = argv;
  if (cmd === "doc" && file) {
    const errors = await checkDocument(file);
    for (const e of errors) console.error(e);
    if (!errors.length) console.log(`${file}: a valid OpenAPI 3.1 document`);
    return errors.length ? 1 : 0;
  }
  if (cmd === "response" && file && rest.length >= 4) {
    const [method, path, status, bodyFile, contentType] = rest;
    const { checkResponse } = await loadOpenApi(file);
    const r = checkResponse(method, path, Number(status), readFileSync(bodyFile, "utf8"), contentType);
    for (const e of r.errors) console.error(`${method} ${path} ${status}: ${e}`);
    return r.ok ? 0 : 1;
  }
  console.error("usage: openapi_check.mjs doc OPENAPI.json\n" +
    "       openapi_check.mjs response OPENAPI.json METHOD PATH STATUS BODY_FILE [CONTENT_TYPE]");
  return 2;
}

if (import.meta.url === pathToFileURL(process.argv[1] || "").href)
  process.exitCode = await main(process.argv.slice(2));
