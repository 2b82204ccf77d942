// v1.mjs drives homed's /v1 with the official OpenAI JavaScript SDK (openai, pinned in
// package.json) as an app would: the e2e tests in cmd/homed run it with node and read one JSON
// line from stdout. It decides nothing: it reports what the server answered.
//
// usage: node v1.mjs BASE_URL TOKEN STEP JSON
//   chat {"messages":[…], "user"?, "stream"?, "max_retries"?, "params"?, "headers"?}   one chat
//        completion (params: more request fields, e.g. max_tokens; headers: sent with it); prints
//        {reply, usage, id, status?, error?} (status and error when the SDK gave up)
//   model {"id"}                                             models.retrieve; {id} or {status}
//   tools {"text", "result", "stream"?}   a client tool round trip as an app does it: the text
//        with a get_weather tool; the model's call answered with result; prints {finish, name,
//        args, reply, final_finish}
import OpenAI from "openai";

const [base, token, step, arg] = process.argv.slice(2);
const opts = JSON.parse(arg || "{}");
const client = new OpenAI({ baseURL: base + "/v1", apiKey: token, maxRetries: opts.max_retries ?? 2, timeout: 60_000, defaultHeaders: opts.headers || {} });
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
  } else if (step === "tools") {
    const tools = [{ type: "function", function: { name: "get_weather", description: "The weather in a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }];
    const messages = [{ role: "user", content: opts.text }];
    const ask = async () => {
      if (!opts.stream) {
        const r = await client.chat.completions.create({ model: "fake-1", messages, tools });
        return { message: r.choices[0].message, finish: r.choices[0].finish_reason };
      }
      const s = client.chat.completions.stream({ model: "fake-1", messages, tools });
      const r = await s.finalChatCompletion();
      return { message: r.choices[0].message, finish: r.choices[0].finish_reason };
    };
    const first = await ask();
    const call = (first.message.tool_calls || [])[0];
    if (!call) { out({ finish: first.finish, reply: first.message.content }); process.exit(0); }
    messages.push(first.message);
    messages.push({ role: "tool", tool_call_id: call.id, content: opts.result });
    const second = await ask();
    out({ finish: first.finish, name: call.function.name, args: call.function.arguments, reply: second.message.content, final_finish: second.finish });
  } else if (step === "model") {
    const m = await client.models.retrieve(opts.id);
    out({ id: m.id });
  } else {
    throw new Error("unknown step " + step);
  }
} catch (e) {
  out({ status: e.status ?? 0, error: String(e.message || e) });
}
