// A client on the official ACP TypeScript SDK (@agentclientprotocol/sdk,
// ClientApp), driving `rhema-lsp acp` through one scenario and printing what
// it saw as one JSON object on stdout (tests/acp/test_typescript_client.py
// reads it). Usage: node driver.mjs SCENARIO CONFIG_JSON, where CONFIG_JSON
// has `command` (the agent's argv), `cwd` (the workspace) and `env`.
// Terminals are real child processes; every raw line the agent writes is
// kept, so the test sees errors the SDK itself would swallow.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { ClientApp, ndJsonStream } from "@agentclientprotocol/sdk";
import { extensions } from "./extensions.mjs";
import * as more from "./more.mjs";

const [scenario, rawConfig] = process.argv.slice(2);
const config = JSON.parse(rawConfig);
const child = spawn(config.command[0], config.command.slice(1), {
  env: { ...process.env, ...config.env },
  stdio: ["pipe", "pipe", "inherit"],
});

const seen = { updates: [], raw: [], asked: [], terminal: [], results: {} };
const terminals = new Map();
let onUpdate = () => {};

// The agent's stdout, teed: one copy for the SDK, one kept line by line.
const agentOut = Readable.toWeb(child.stdout);
const [forSdk, forLog] = agentOut.tee();
(async () => {
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of forLog) {
    pending += decoder.decode(chunk, { stream: true });
    let cut;
    while ((cut = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, cut);
      pending = pending.slice(cut + 1);
      if (line.trim()) seen.raw.push(JSON.parse(line));
    }
  }
})();
const agentIn = Writable.toWeb(child.stdin);
const stream = ndJsonStream(agentIn, forSdk);

async function rawLine(text) {
  // Between the SDK's own writes (each takes and releases the writer).
  const writer = agentIn.getWriter();
  try {
    await writer.write(new TextEncoder().encode(text + "\n"));
  } finally {
    writer.releaseLock();
  }
}

const answers = config.answers ?? [];
const app = new ClientApp()
  .onNotification("session/update", ({ params }) => {
    seen.updates.push(params.update);
    onUpdate(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
    seen.asked.push(params.toolCall.toolCallId);
    const choice = answers.shift();
    return choice
      ? { outcome: { outcome: "selected", optionId: choice } }
      : { outcome: { outcome: "cancelled" } };
  })
  .onRequest("terminal/create", ({ params }) => {
    const id = `t${terminals.size}`;
    seen.terminal.push(["create", params.command, params.args, params.cwd]);
    const proc = spawn(params.command, params.args ?? [], {
      cwd: params.cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const term = { proc, output: "", exit: null };
    term.exited = new Promise((resolve) =>
      proc.on("exit", (code, signal) => {
        term.exit = { exitCode: code, signal };
        resolve(term.exit);
      }),
    );
    proc.stdout.on("data", (d) => (term.output += d));
    proc.stderr.on("data", (d) => (term.output += d));
    terminals.set(id, term);
    return { terminalId: id };
  })
  .onRequest("terminal/wait_for_exit", async ({ params }) => {
    seen.terminal.push(["wait", params.terminalId]);
    return await terminals.get(params.terminalId).exited;
  })
  .onRequest("terminal/output", ({ params }) => {
    seen.terminal.push(["output", params.terminalId]);
    const term = terminals.get(params.terminalId);
    return { output: term.output, truncated: false, exitStatus: term.exit };
  })
  .onRequest("terminal/kill", ({ params }) => {
    seen.terminal.push(["kill", params.terminalId]);
    const term = terminals.get(params.terminalId);
    if (term.exit === null) process.kill(-term.proc.pid, "SIGKILL");
    return {};
  })
  .onRequest("terminal/release", ({ params }) => {
    seen.terminal.push(["release", params.terminalId]);
    const term = terminals.get(params.terminalId);
    if (term.exit === null) process.kill(-term.proc.pid, "SIGKILL");
    return {};
  });

function nextUpdate(predicate) {
  return new Promise((resolve) => {
    const before = onUpdate;
    onUpdate = (update) => {
      before(update);
      if (predicate(update)) {
        onUpdate = before;
        resolve(update);
      }
    };
  });
}

const text = (t) => ({ type: "text", text: t });

async function tour(agent) {
  const r = seen.results;
  r.initialize = await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
    clientInfo: { name: "rhema-ts-tests", version: "1" },
  });
  const created = await agent.request("session/new", { cwd: config.cwd, mcpServers: [] });
  const sid = created.sessionId;
  r.newOptions = created.configOptions;
  r.chosen = await agent.request("session/set_config_option", {
    sessionId: sid, configId: "model", value: "fake-large",
  });
  r.switched = await agent.request("session/set_config_option", {
    sessionId: sid, configId: "mode", value: "agent",
  });
  // two adjacent text blocks (CodeCompanion's file note, then the question)
  r.glued = await agent.request("session/prompt", {
    sessionId: sid, prompt: [text("/tmp/hello.py"), text("Explain this file.")],
  });
  r.status = await agent.request("session/prompt", { sessionId: sid, prompt: [text("/status")] });
  r.ran = await agent.request("session/prompt", { sessionId: sid, prompt: [text("run it")] });
  // a command killed on cancel: cancel once its terminal exists
  const waiting = agent.request("session/prompt", { sessionId: sid, prompt: [text("wait")] });
  while (!seen.terminal.some(([what, id]) => what === "wait" && id === "t1")) {
    await new Promise((ok) => setTimeout(ok, 20));
  }
  await agent.notify("session/cancel", { sessionId: sid });
  r.cancelled = await waiting;
  // $/cancel_request: the SDK sends it when the request's signal aborts
  const abort = new AbortController();
  const talking = agent.request(
    "session/prompt", { sessionId: sid, prompt: [text("talk")] }, { cancellationSignal: abort.signal },
  );
  await nextUpdate((u) => u.sessionUpdate === "agent_message_chunk");
  abort.abort();
  r.abortedPrompt = await talking.then((v) => ({ ok: v }), (e) => ({ error: String(e) }));
  // bad lines, then the agent still serves
  await rawLine("[]");
  await rawLine('{"jsonrpc": "2.0", "id": 1, "method"');
  r.afterBadLines = await agent.request("session/list", { cwd: config.cwd });
  // lifecycle: close, resume, delete
  await agent.request("session/close", { sessionId: sid });
  r.resumed = await agent.request("session/resume", { sessionId: sid, cwd: config.cwd, mcpServers: [] });
  r.deleted = await agent.request("session/delete", { sessionId: sid });
  r.listAfterDelete = await agent.request("session/list", { cwd: config.cwd });
  r.pagedFirst = await agent.request("session/list", { cwd: config.other });
  if (r.pagedFirst.nextCursor) {
    r.pagedSecond = await agent.request("session/list", {
      cwd: config.other, cursor: r.pagedFirst.nextCursor,
    });
  }
}

async function codecompanion(agent) {
  // CodeCompanion's shape: fs both ways, no terminal, options only (never set_mode)
  const r = seen.results;
  r.initialize = await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "CodeCompanion.nvim", version: "1.0.0" },
  });
  const created = await agent.request("session/new", { cwd: config.cwd, mcpServers: [] });
  r.newOptions = created.configOptions;
  r.denied = await agent.request("session/prompt", {
    sessionId: created.sessionId, prompt: [text("run it")],
  });
  r.switched = await agent.request("session/set_config_option", {
    sessionId: created.sessionId, configId: "mode", value: "agent",
  });
  r.ran = await agent.request("session/prompt", {
    sessionId: created.sessionId, prompt: [text("run it now")],
  });
}

const scenarios = {
  tour, codecompanion, ...more,
  extensions: (agent) => extensions(agent, { seen, config, nextUpdate }),
};
let failure = null;
try {
  await app.connectWith(stream, (agent) => scenarios[scenario](agent, { seen, config }));
} catch (error) {
  failure = String(error?.stack ?? error);
}
child.stdin.end();
await new Promise((ok) => child.on("exit", ok));
await new Promise((ok) => setTimeout(ok, 50)); // the last raw lines
process.stdout.write(JSON.stringify({ ...seen, failure }) + "\n");
