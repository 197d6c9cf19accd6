// More scenarios for driver.mjs (tests/acp/test_typescript_signin.py): each
// takes the SDK's agent connection and the driver's context.
import { spawn } from "node:child_process";

const text = (t) => ({ type: "text", text: t });

// Terminal Auth as a client runs it: the agent's command plus the method's
// args and env, in a "terminal" (here a pipe fed the user's answers); then
// a new session on the same connection uses the stored choice; then that
// session is forked, and the fork's boolean option set.
export async function signin(agent, { seen, config }) {
  const r = seen.results;
  r.initialize = await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: {
      auth: { terminal: true },
      session: { configOptions: { boolean: {} } },
    },
    clientInfo: { name: "rhema-ts-tests", version: "1" },
  });
  const method = r.initialize.authMethods.find((m) => m.type === "terminal");
  const child = spawn(config.command[0], [...config.command.slice(1), ...(method.args ?? [])], {
    env: { ...process.env, ...config.env, ...(method.env ?? {}) },
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stdin.end(config.setupInput);
  r.setupExit = await new Promise((ok) => child.on("exit", ok));
  r.setupOut = out;
  const created = await agent.request("session/new", { cwd: config.cwd, mcpServers: [] });
  const sid = created.sessionId;
  await agent.request("session/set_config_option", { sessionId: sid, configId: "mode", value: "ask" });
  r.prompted = await agent.request("session/prompt", {
    sessionId: sid, prompt: [text("hello after sign-in")],
  });
  r.forked = await agent.request("session/fork", { sessionId: sid, cwd: config.cwd, mcpServers: [] });
  const fid = r.forked.sessionId;
  r.network = await agent.request("session/set_config_option", {
    sessionId: fid, configId: "network", type: "boolean", value: true,
  });
  r.badNetwork = await agent
    .request("session/set_config_option", { sessionId: fid, configId: "network", value: "yes" })
    .then((v) => ({ ok: v }), (e) => ({ error: e.code ?? String(e) }));
  r.inFork = await agent.request("session/prompt", { sessionId: fid, prompt: [text("what number?")] });
  r.listed = await agent.request("session/list", { cwd: config.cwd });
}
