// verify.mjs — checks one webhook signature of loom serve with the
// reference implementation (the npm package standardwebhooks, installed in
// tests/validate by scripts/deps.sh). Run by tests/unit/test_server_webhooks.c:
//   node tests/webhooks/verify.mjs SECRET MSG_ID TIMESTAMP SIGNATURE BODY_FILE
// Exit 0 when the signature verifies, 1 when it does not, 2 on bad usage or
// when the package is missing (so a missing install fails the test loudly).
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";

const [secret, id, ts, sig, bodyFile] = process.argv.slice(2);
if (!bodyFile) {
  console.error("usage: verify.mjs SECRET MSG_ID TIMESTAMP SIGNATURE BODY_FILE");
  process.exit(2);
}
// The package lives in tests/validate/node_modules, not beside this file.
const require = createRequire(new URL("../validate/package.json", import.meta.url));
let Webhook;
try {
  ({ Webhook } = require("standardwebhooks"));
} catch (e) {
  console.error("verify.mjs: standardwebhooks is not installed (scripts/deps.sh): " + e.message);
  process.exit(2);
}
const body = readFileSync(bodyFile, "utf8");
try {
  new Webhook(secret).verify(body, {
    "webhook-id": id,
    "webhook-timestamp": ts,
    "webhook-signature": sig,
  });
  console.log("verified");
} catch (e) {
  console.error("verify.mjs: " + e.message);
  process.exit(1);
}
