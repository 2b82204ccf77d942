// An editor for the waiter acp end-to-end test (cmd/homed/e2e_acp_test.go), written on the
// official ACP TypeScript client (@agentclientprotocol/sdk, pinned in package.json). It starts
// `$WAITER acp` as editors do, runs the steps below and prints one JSON report on stdout; the Go
// test checks it. Any protocol error ends it with exit 1 and the error on stderr.
//
// usage: node editor.mjs WAITER PROJECT_DIR OTHER_DIR MCP_SERVER_JS
import { spawn, execFile } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [waiter, project, other, mcpServer] = process.argv.slice(2);

// connect starts one waiter acp and runs op(agent, state) on it; state collects what it saw.
async function connect(op) {
  const child = spawn(waiter, ["acp"], { stdio: ["pipe", "pipe", "inherit"] });
  const state = { updates: [], permissions: [], answer: null, files: {}, fsCalls: [], terminals: {}, termCalls: [] };
  const app = acp
    .client()
    .onNotification("session/update", (ctx) => {
      state.updates.push(ctx.params);
    })
    .onRequest("session/request_permission", async (ctx) => {
      state.permissions.push(ctx.params);
      return state.answer(ctx);
    })
    // The editor's buffers: what the agent reads and writes through fs/*.
    .onRequest("fs/read_text_file", async (ctx) => {
      state.fsCalls.push({ method: "read", ...ctx.params });
      const text = state.files[ctx.params.path];
      if (text === undefined) throw acp.RequestError.resourceNotFound(ctx.params.path);
      let lines = text.split("\n");
      const from = (ctx.params.line ?? 1) - 1;
      lines = lines.slice(from, ctx.params.limit ? from + ctx.params.limit : undefined);
      return { content: lines.join("\n") };
    })
    .onRequest("fs/write_text_file", async (ctx) => {
      state.fsCalls.push({ method: "write", ...ctx.params });
      state.files[ctx.params.path] = ctx.params.content;
      return {};
    })
    // The editor's terminals: each runs its command at once and keeps its output.
    .onRequest("terminal/create", async (ctx) => {
      const { command, args, cwd } = ctx.params;
      const id = "term-" + (Object.keys(state.terminals).length + 1);
      state.termCalls.push({ method: "create", id, command, args, cwd });
      state.terminals[id] = new Promise((resolve) => {
        execFile(command, args ?? [], { cwd }, (err, stdout, stderr) => {
          resolve({ output: stdout + stderr, exitCode: err ? (typeof err.code === "number" ? err.code : 127) : 0 });
        });
      });
      return { terminalId: id };
    })
    .onRequest("terminal/wait_for_exit", async (ctx) => {
      const r = await state.terminals[ctx.params.terminalId];
      return { exitCode: r.exitCode };
    })
    .onRequest("terminal/output", async (ctx) => {
      const r = await state.terminals[ctx.params.terminalId];
      return { output: r.output, truncated: false, exitStatus: { exitCode: r.exitCode } };
    })
    .onRequest("terminal/kill", async () => ({}))
    .onRequest("terminal/release", async (ctx) => {
      state.termCalls.push({ method: "release", id: ctx.params.terminalId });
      return {};
    });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  try {
    return await app.connectWith(stream, (agent) => op(agent, state));
  } finally {
    // As editors do: SIGTERM, then wait for the agent to exit (it removes the session's MCP servers).
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill();
      await exited;
    }
  }
}

// turn sends one prompt and returns its stop reason with the updates it streamed.
async function turn(agent, state, sessionId, text) {
  state.updates = [];
  state.permissions = [];
  const res = await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
  return { stopReason: res.stopReason, updates: state.updates, permissions: state.permissions };
}

const pick = (id) => async () => ({ outcome: { outcome: "selected", optionId: id } });
const report = {};

await connect(async (agent, state) => {
  report.initialize = await agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "hologram-e2e-editor", version: "1.0.0" },
  });
  const s = await agent.request("session/new", { cwd: project, mcpServers: [] });
  report.newSession = s;
  const sid = s.sessionId;
  report.hello = await turn(agent, state, sid, "hello editor");
  report.tool = await turn(agent, state, sid, 'CALL notes_create {"title":"ACP","body":"written from the editor"}');
  state.answer = pick("allow_once");
  report.allow = await turn(agent, state, sid, 'CALL shell_run {"argv":["echo","acp-allowed"]}');
  state.answer = pick("reject_once");
  report.reject = await turn(agent, state, sid, 'CALL shell_run {"argv":["echo","acp-rejected"]}');
  // Cancel mid-turn: while the turn waits for the permission, the editor cancels the turn and
  // answers the pending request "cancelled", as the protocol asks.
  state.answer = async (ctx) => {
    await agent.notify("session/cancel", { sessionId: sid });
    return { outcome: { outcome: "cancelled" } };
  };
  report.cancel = await turn(agent, state, sid, 'CALL shell_run {"argv":["echo","acp-cancelled"]}');
  report.afterCancel = await turn(agent, state, sid, "still there?");
  state.answer = pick("allow_always");
  report.always1 = await turn(agent, state, sid, 'CALL shell_run {"argv":["echo","acp-always-1"]}');
  state.answer = async () => {
    throw new Error("asked again after allow always");
  };
  report.always2 = await turn(agent, state, sid, 'CALL shell_run {"argv":["echo","acp-always-2"]}');
  try {
    report.badModel = await agent.request("session/set_config_option", { sessionId: sid, configId: "model", value: "no-such-model" });
  } catch (e) {
    report.badModel = { error: e.message, code: e.code };
  }
  report.setModel = await agent.request("session/set_config_option", { sessionId: sid, configId: "model", value: "fake-1" });
  const o = await agent.request("session/new", { cwd: other, mcpServers: [] });
  report.otherSession = o.sessionId;
  report.otherModes = o.modes;
  await agent.request("session/set_mode", { sessionId: o.sessionId, modeId: "fake-1" });
  report.noFs = await turn(agent, state, o.sessionId, 'CALL editor_read_file {"path":"main.go"}');
  // The editor's MCP server runs for its session only.
  const m = await agent.request("session/new", {
    cwd: other,
    mcpServers: [{ name: "everything", command: "node", args: [mcpServer, "stdio"], env: [{ name: "FROM_EDITOR", value: "1" }] }],
  });
  report.mcpSession = m.sessionId;
  report.mcpEcho = await turn(agent, state, m.sessionId, 'CALL echo {"message":"from the editor"}');
  report.mcpElsewhere = await turn(agent, state, sid, 'CALL echo {"message":"elsewhere"}');
  try {
    await agent.request("session/new", { cwd: other, mcpServers: [{ type: "http", name: "web", url: "http://127.0.0.1:1/mcp", headers: [] }] });
    report.mcpHttp = { error: null };
  } catch (e) {
    report.mcpHttp = { error: e.message + " " + JSON.stringify(e.data ?? null), code: e.code };
  }
  try {
    await agent.request("session/prompt", { sessionId: "s-not-open", prompt: [{ type: "text", text: "x" }] });
    report.unknownSession = { error: null };
  } catch (e) {
    report.unknownSession = { error: e.message, code: e.code };
  }
});

// A second connection, as after an editor restart: list the project's sessions, load the first.
await connect(async (agent, state) => {
  await agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  report.list = await agent.request("session/list", { cwd: project });
  report.listAll = await agent.request("session/list", {});
  state.updates = [];
  report.load = await agent.request("session/load", { sessionId: report.newSession.sessionId, cwd: project, mcpServers: [] });
  report.replay = state.updates;
  state.answer = async () => {
    throw new Error("asked after allow always (second connection)");
  };
  report.always3 = await turn(agent, state, report.newSession.sessionId, 'CALL shell_run {"argv":["echo","acp-always-3"]}');
  // fs through the editor: an unsaved buffer is read, a new file written, a path outside refused.
  const sid = report.newSession.sessionId;
  state.files[project + "/main.go"] = "package main\n// unsaved edit in the editor\nfunc main() {}";
  report.fsRead = await turn(agent, state, sid, 'CALL editor_read_file {"path":"main.go","line":2,"limit":1}');
  report.fsWrite = await turn(agent, state, sid, 'CALL editor_write_file {"path":"out/new.txt","content":"written by the agent"}');
  report.fsOutside = await turn(agent, state, sid, 'CALL editor_read_file {"path":"../secret.txt"}');
  report.fsCalls = state.fsCalls;
  report.files = state.files;
});

// A third connection from an editor with a terminal: commands run there, after the permission.
await connect(async (agent, state) => {
  await agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { terminal: true } });
  const s = await agent.request("session/new", { cwd: project, mcpServers: [] });
  state.answer = pick("allow_once");
  report.termRun = await turn(agent, state, s.sessionId, 'CALL editor_run {"command":"echo","args":["from","the","terminal"]}');
  state.answer = pick("reject_once");
  report.termReject = await turn(agent, state, s.sessionId, 'CALL editor_run {"command":"echo","args":["rejected"]}');
  report.termShell = await turn(agent, state, s.sessionId, 'CALL shell_run {"argv":["echo","x"]}');
  report.termCalls = state.termCalls;
});

process.stdout.write(JSON.stringify(report) + "\n");
