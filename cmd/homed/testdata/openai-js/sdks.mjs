// sdks.mjs drives homed's /v1 with two more real clients, pinned in package.json: the Vercel AI
// SDK (ai + @ai-sdk/openai-compatible) and LangChain JS (@langchain/openai). The e2e tests in
// cmd/homed run it with node and read one JSON line from stdout. It decides nothing: it reports
// what the server answered.
//
// usage: node sdks.mjs BASE_URL TOKEN STEP JSON
//   ai-stream {text}                 streamText: prints {reply, usage}
//   ai-tools {text, result}          generateText with a get_weather tool the SDK runs itself
//                                    (answering result): {calls, args, reply, steps, usage}
//   ai-chat {text, max_retries?, idempotency_key?}   generateText (with an Idempotency-Key
//                                    header when given): {reply} or {status, error}
//   lc-stream {text}                 ChatOpenAI.stream: {reply, usage}
//   lc-tools {text, result}          ChatOpenAI.bindTools, the call answered by a ToolMessage:
//                                    {calls, args, reply, usage}
//   lc-chat {text, max_retries?, idempotency_key?}   ChatOpenAI.invoke (the header passed in the
//                                    call's options): {reply} or {status, error}
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";

const [base, token, step, arg] = process.argv.slice(2);
const opts = JSON.parse(arg || "{}");
const out = (v) => process.stdout.write(JSON.stringify(v) + "\n");
const weather = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

const ai = () => createOpenAICompatible({ name: "hologram", baseURL: base + "/v1", apiKey: token, includeUsage: true }).chatModel("fake-1");
const lc = (extra = {}) => new ChatOpenAI({ model: "fake-1", apiKey: token, configuration: { baseURL: base + "/v1" }, timeout: 60_000, ...extra });
const lcUsage = (m) => m.usage_metadata ? { prompt_tokens: m.usage_metadata.input_tokens, completion_tokens: m.usage_metadata.output_tokens, total_tokens: m.usage_metadata.total_tokens } : null;
const aiUsage = (u) => u ? { prompt_tokens: u.inputTokens, completion_tokens: u.outputTokens, total_tokens: u.totalTokens } : null;

try {
  if (step === "ai-stream") {
    const r = streamText({ model: ai(), prompt: opts.text });
    let reply = "";
    for await (const piece of r.textStream) reply += piece;
    out({ reply, usage: aiUsage(await r.usage) });
  } else if (step === "ai-tools") {
    const calls = [], args = [];
    const r = await generateText({
      model: ai(), prompt: opts.text, stopWhen: stepCountIs(3),
      tools: { get_weather: tool({ description: "The weather in a city", inputSchema: jsonSchema(weather),
        execute: async (input) => { calls.push("get_weather"); args.push(input); return opts.result; } }) },
    });
    out({ calls, args, reply: r.text, steps: r.steps.length, usage: aiUsage(r.totalUsage) });
  } else if (step === "ai-chat") {
    const headers = opts.idempotency_key ? { "Idempotency-Key": opts.idempotency_key } : undefined;
    const r = await generateText({ model: ai(), prompt: opts.text, maxRetries: opts.max_retries ?? 2, headers });
    out({ reply: r.text });
  } else if (step === "lc-stream") {
    let acc = null;
    for await (const c of await lc({ streaming: true, streamUsage: true }).stream(opts.text)) acc = acc ? acc.concat(c) : c;
    out({ reply: acc.content, usage: lcUsage(acc) });
  } else if (step === "lc-tools") {
    const model = lc().bindTools([{ type: "function", function: { name: "get_weather", description: "The weather in a city", parameters: weather } }]);
    const messages = [new HumanMessage(opts.text)];
    const first = await model.invoke(messages);
    const calls = (first.tool_calls || []).map((c) => c.name), args = (first.tool_calls || []).map((c) => c.args);
    if (!first.tool_calls || first.tool_calls.length === 0) { out({ calls, reply: first.content }); process.exit(0); }
    messages.push(first);
    for (const c of first.tool_calls) messages.push(new ToolMessage({ tool_call_id: c.id, content: opts.result }));
    const second = await model.invoke(messages);
    out({ calls, args, reply: second.content, usage: lcUsage(second) });
  } else if (step === "lc-chat") {
    const options = opts.idempotency_key ? { headers: { "Idempotency-Key": opts.idempotency_key } } : undefined;
    const r = await lc({ maxRetries: opts.max_retries ?? 2 }).invoke(opts.text, { options });
    out({ reply: r.content });
  } else {
    throw new Error("unknown step " + step);
  }
} catch (e) {
  const status = e.status ?? e.statusCode ?? e.lastError?.statusCode ?? e.cause?.status ?? 0;
  // The cause says why a 200 could not be processed (a cut stream, a chunk the SDK's schema
  // refuses): the error alone does not.
  const cause = e.cause ? String(e.cause.message || e.cause) : undefined;
  out({ status, error: String(e.message || e), cause, body: e.responseBody });
}
