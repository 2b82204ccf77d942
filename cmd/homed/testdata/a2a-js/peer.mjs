// peer.mjs drives homed's A2A server with the official A2A JavaScript client (@a2a-js/sdk,
// pinned in package.json): the e2e test in cmd/homed runs it with node and reads one JSON line
// per step from stdout. It decides nothing: it reports what the server answered.
//
// usage: node peer.mjs BASE_URL TOKEN STEP [ARG]
//   card                      the agent card (fetched by the SDK's resolver, no token)
//   send TEXT                 SendMessage, blocking; prints the task
//   stream TEXT               SendStreamingMessage; prints the event kinds and the last task state
//   start TEXT                SendMessage with returnImmediately; prints the task
//   get ID                    GetTask
//   list                      ListTasks
//   cancel ID                 CancelTask
//   subscribe ID              SubscribeToTask; prints the event kinds (SUBSCRIBED on stderr at the first)
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";

const [base, token, step, arg] = process.argv.slice(2);
const authFetch = (url, init = {}) => {
  const headers = new Headers(init.headers || {});
  if (token) headers.set("Authorization", "Bearer " + token);
  return fetch(url, { ...init, headers });
};
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
}));
const text = (parts) => (parts || []).map((p) => (p.content && p.content.$case === "text" ? p.content.value : "")).join("");
const state = (s) => (typeof s === "number" ? ["UNSPECIFIED", "SUBMITTED", "WORKING", "COMPLETED", "FAILED", "CANCELED", "INPUT_REQUIRED", "REJECTED", "AUTH_REQUIRED"][s] || String(s) : String(s));
const task = (t) => ({
  id: t.id, contextId: t.contextId, state: state(t.status && t.status.state),
  reply: (t.artifacts || []).map((a) => text(a.parts)).join(""),
  status: t.status && t.status.message ? text(t.status.message.parts) : "",
});
const message = (s) => ({
  messageId: "m-" + Math.random().toString(36).slice(2), contextId: "", taskId: "", role: 1,
  parts: [{ content: { $case: "text", value: s }, metadata: undefined }], metadata: undefined, extensions: [], referenceTaskIds: [],
});
const request = (s, immediate) => ({
  tenant: "", message: message(s), metadata: undefined,
  configuration: immediate ? { acceptedOutputModes: ["text/plain"], taskPushNotificationConfig: undefined, returnImmediately: true } : undefined,
});
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");

try {
  const client = await factory.createFromUrl(base);
  switch (step) {
    case "card": {
      const c = await client.getAgentCard();
      out({ name: c.name, streaming: !!(c.capabilities && c.capabilities.streaming), skills: (c.skills || []).map((s) => s.id),
        interfaces: (c.supportedInterfaces || []).map((i) => ({ url: i.url, binding: i.protocolBinding, version: i.protocolVersion })),
        schemes: Object.keys(c.securitySchemes || {}), requirements: (c.securityRequirements || []).length, version: client.protocolVersion });
      break;
    }
    case "send":
    case "start": {
      const r = await client.sendMessage(request(arg, step === "start"));
      out(r && r.status ? task(r) : { message: text(r && r.parts) });
      break;
    }
    case "stream":
    case "subscribe": {
      const kinds = [];
      let last = null;
      const events = step === "stream" ? client.sendMessageStream(request(arg, false)) : client.resubscribeTask({ tenant: "", id: arg });
      for await (const ev of events) {
        const p = ev.payload || ev;
        const kind = p.$case || (p.kind ?? "?");
        kinds.push(kind);
        if (kinds.length === 1 && step === "subscribe") process.stderr.write("SUBSCRIBED\n"); // the test cancels now
        if (kind === "task") last = task(p.value);
        if (kind === "statusUpdate" && last) last.state = state(p.value.status.state);
        if (kind === "artifactUpdate" && last) { // chunks append; the last one replaces them
          last.reply = (p.value.append ? last.reply : "") + text(p.value.artifact.parts);
        }
      }
      out({ kinds, task: last });
      break;
    }
    case "get":
      out(task(await client.getTask({ tenant: "", id: arg })));
      break;
    case "list": {
      const r = await client.listTasks({ tenant: "", contextId: "", status: 0, pageSize: 100, pageToken: "", includeArtifacts: true });
      out({ total: r.totalSize, tasks: (r.tasks || []).map(task) });
      break;
    }
    case "cancel":
      out(task(await client.cancelTask({ tenant: "", id: arg, metadata: undefined })));
      break;
    default:
      throw new Error("unknown step " + step);
  }
} catch (e) {
  out({ error: String((e && e.message) || e), code: e && (e.code ?? null) });
  process.exitCode = 3;
}
