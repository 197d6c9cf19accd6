// A client on the official ACP TypeScript SDK (@agentclientprotocol/sdk,
// ClientApp) that declares `elicitation` (form and url) and answers
// `elicitation/create`: a form with CONFIG.form as its content, a URL by
// "visiting" it (writing CONFIG.visited, which the scripted MCP server
// watches, as a server hears a sign-in completed), and records the
// `elicitation/complete` notifications the agent passes on. Usage:
// node elicit.mjs CONFIG_JSON, CONFIG_JSON having `command`, `cwd`, `env`,
// `mcpServers`, `form`, `visited` and `prompts`. Prints what it saw as one
// JSON object (tests/acp/test_typescript_elicitation.py reads it).
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { ClientApp, ndJsonStream } from "@agentclientprotocol/sdk";

const config = JSON.parse(process.argv[2]);
const child = spawn(config.command[0], config.command.slice(1), {
  env: { ...process.env, ...config.env },
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const seen = { elicited: [], completed: [], permissions: 0, results: [] };

const app = new ClientApp()
  .onNotification("session/update", () => {})
  .onNotification("elicitation/complete", ({ params }) => {
    seen.completed.push(params);
  })
  .onRequest("session/request_permission", () => {
    seen.permissions += 1;
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest("elicitation/create", ({ params }) => {
    seen.elicited.push(params);
    if (params.mode === "url") {
      writeFileSync(config.visited, "yes");
      return { action: "accept" };
    }
    return { action: "accept", content: config.form };
  });

async function elicit(agent) {
  seen.initialize = await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { elicitation: { form: {}, url: {} } },
    clientInfo: { name: "rhema-ts-elicitation", version: "1" },
  });
  const created = await agent.request("session/new", {
    cwd: config.cwd, mcpServers: config.mcpServers,
  });
  for (const prompt of config.prompts) {
    seen.results.push(await agent.request("session/prompt", {
      sessionId: created.sessionId, prompt: [{ type: "text", text: prompt }],
    }));
  }
}

let failure = null;
try {
  await app.connectWith(stream, elicit);
} catch (error) {
  failure = String(error?.stack ?? error);
}
child.stdin.end();
await new Promise((ok) => child.on("exit", ok));
process.stdout.write(JSON.stringify({ ...seen, failure }) + "\n");
