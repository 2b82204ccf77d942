// v1.mjs drives homed's /v1 with the official OpenAI JavaScript SDK (openai, pinned in
// package.json) as an app would: the e2e tests in cmd/homed run it with node and read one JSON
// line from stdout. It decides nothing: it reports what the server answered.
//
// usage: node v1.mjs BASE_URL TOKEN STEP JSON
//   chat {"messages":[…], "user"?, "stream"?, "max_retries"?, "params"?}   one chat completion
//        (params: more request fields, e.g. max_tokens); prints
//        {reply, usage, id, status?, error?} (status and error when the SDK gave up)
//   model {"id"}                                             models.retrieve; {id} or {status}
import OpenAI from "openai";

const [base, token, step, arg] = process.argv.slice(2);
const opts = JSON.parse(arg || "{}");
const client = new OpenAI({ baseURL: base + "/v1", apiKey: token, maxRetries: opts.max_retries ?? 2, timeout: 60_000 });
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
try {
  if (step === "chat") {
    const req = { model: opts.model || "fake-1", messages: opts.messages, ...(opts.params || {}) };
    if (opts.user) req.user = opts.user;
    if (opts.stream) {
      const stream = await client.chat.completions.create({ ...req, stream: true, stream_options: { include_usage: true } });
      let reply = "", usage = null, id = "";
      for await (const c of stream) {
        id = c.id;
        if (c.choices && c.choices[0] && c.choices[0].delta && c.choices[0].delta.content) reply += c.choices[0].delta.content;
        if (c.usage) usage = c.usage;
      }
      out({ reply, usage, id });
    } else {
      const r = await client.chat.completions.create(req);
      out({ reply: r.choices[0].message.content, usage: r.usage, id: r.id });
    }
  } else if (step === "model") {
    const m = await client.models.retrieve(opts.id);
    out({ id: m.id });
  } else {
    throw new Error("unknown step " + step);
  }
} catch (e) {
  out({ status: e.status ?? 0, error: String(e.message || e) });
}
