// a2a_client.mjs — drives loom serve's A2A surface with the official
// @a2a-js/sdk client (tests/e2e/a2a_sdk.sh). Each subcommand prints one
// JSON line per result, in the SDK's own ProtoJSON (Task.toJSON & co.), so
// the shell test reads them with jq. An SDK error prints
// {"error": name, "code": envelope code, "message"} and exits 0: the test
// decides whether an error was wanted.
//
//   card BASE [TOKEN]                    the card as the SDK resolved it
//   send BASE TOKEN TEXT [TASK_ID]       SendMessage (blocking); with TASK_ID an answer
//   stream BASE TOKEN TEXT               SendStreamingMessage: every event
//   cancel BASE TOKEN TEXT               stream TEXT, cancel after the first event, read on
//   subscribe BASE TOKEN TEXT            SendMessage returning at once, SubscribeToTask, cancel
//   get BASE TOKEN ID                    GetTask
//   list BASE TOKEN CONTEXT_ID           ListTasks
//   push BASE TOKEN TASK_ID URL          Create, Get, List, Delete a push config
//   sendpush BASE TOKEN TEXT URL         SendMessage with a push notification config
import { randomUUID } from "node:crypto";
import { ClientFactory } from "@a2a-js/sdk/client";
import {
  AgentCard, Role, StreamResponse, Task, TaskPushNotificationConfig, ListTasksResponse,
  ListTaskPushNotificationConfigsResponse,
} from "@a2a-js/sdk";

const [cmd, base, token, ...rest] = process.argv.slice(2);
const opts = token ? { serviceParameters: { Authorization: `Bearer ${token}` } } : undefined;
const out = (o) => process.stdout.write(JSON.stringify(o) + "\n");

function message(text, taskId) {
  return {
    messageId: randomUUID(), contextId: "", taskId: taskId ?? "", role: Role.ROLE_USER,
    parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined, extensions: [], referenceTaskIds: [],
  };
}

const sendParams = (text, taskId) => ({
  tenant: "", message: message(text, taskId), configuration: undefined,
  metadata: process.env.A2A_SKILL ? { skillId: process.env.A2A_SKILL } : undefined,
});

function eventJson(ev) {
  return StreamResponse.toJSON(ev);
}

async function main() {
  const client = await new ClientFactory().createFromUrl(base);
  switch (cmd) {
    case "card":
      out(AgentCard.toJSON(client.agentCard ?? (await client.getAgentCard())));
      break;
    case "send": {
      const r = await client.sendMessage(sendParams(rest[0], rest[1]), opts);
      out("messageId" in r ? { message: r } : { task: Task.toJSON(r) });
      break;
    }
    case "sendpush": {
      // SendMessage whose configuration names a push notification URL.
      const p = sendParams(rest[0]);
      p.configuration = {
        acceptedOutputModes: [], returnImmediately: false,
        taskPushNotificationConfig: { tenant: "", id: "", taskId: "", url: rest[1], token: "tok-push", authentication: undefined },
      };
      const r = await client.sendMessage(p, opts);
      out({ task: Task.toJSON(r) });
      break;
    }
    case "stream":
      for await (const ev of client.sendMessageStream(sendParams(rest[0]), opts)) out(eventJson(ev));
      break;
    case "cancel": {
      let id = null;
      for await (const ev of client.sendMessageStream(sendParams(rest[0]), opts)) {
        out(eventJson(ev));
        if (!id && ev.payload?.$case === "task") {
          id = ev.payload.value.id;
          // Cancel once the run works (the model is stalled in its call).
          for (let i = 0; i < 100; i++) {
            const t = await client.getTask({ tenant: "", id }, opts);
            if (Task.toJSON(t).status.state === "TASK_STATE_WORKING") break;
            await new Promise((res) => setTimeout(res, 50));
          }
          const c = await client.cancelTask({ tenant: "", id, metadata: undefined }, opts);
          out({ cancelled: Task.toJSON(c) });
        }
      }
      out({ after: Task.toJSON(await client.getTask({ tenant: "", id }, opts)) });
      break;
    }
    case "subscribe": {
      // A task started without waiting, then followed with SubscribeToTask
      // and cancelled once the subscription has given the Task.
      const p = sendParams(rest[0]);
      p.configuration = { acceptedOutputModes: [], returnImmediately: true, taskPushNotificationConfig: undefined };
      const t = await client.sendMessage(p, opts);
      out({ started: Task.toJSON(t) });
      let cancelled = false;
      for await (const ev of client.resubscribeTask({ tenant: "", id: t.id }, opts)) {
        out(eventJson(ev));
        if (!cancelled) {
          cancelled = true;
          await new Promise((res) => setTimeout(res, 200));
          await client.cancelTask({ tenant: "", id: t.id, metadata: undefined }, opts);
        }
      }
      break;
    }
    case "get":
      out(Task.toJSON(await client.getTask({ tenant: "", id: rest[0] }, opts)));
      break;
    case "list":
      out(ListTasksResponse.toJSON(await client.listTasks({
        tenant: "", contextId: rest[0], status: 0, pageToken: "", statusTimestampAfter: undefined,
      }, opts)));
      break;
    case "push": {
      const [taskId, url] = rest;
      const cfg = { tenant: "", id: "", taskId, url, token: "tok-123", authentication: undefined };
      const made = await client.createTaskPushNotificationConfig(cfg, opts);
      out({ created: TaskPushNotificationConfig.toJSON(made) });
      out({ got: TaskPushNotificationConfig.toJSON(await client.getTaskPushNotificationConfig(
        { tenant: "", taskId, id: made.id }, opts)) });
      out({ listed: ListTaskPushNotificationConfigsResponse.toJSON(
        await client.listTaskPushNotificationConfig({ tenant: "", taskId, pageSize: 0, pageToken: "" }, opts)) });
      await client.deleteTaskPushNotificationConfig({ tenant: "", taskId, id: made.id }, opts);
      out({ listed_after_delete: ListTaskPushNotificationConfigsResponse.toJSON(
        await client.listTaskPushNotificationConfig({ tenant: "", taskId, pageSize: 0, pageToken: "" }, opts)) });
      break;
    }
    default:
      throw new Error(`unknown subcommand ${cmd}`);
  }
}

main().catch((e) => {
  out({ error: e?.name ?? "Error", code: e?.envelopeCode ?? null, message: String(e?.message ?? e) });
});
