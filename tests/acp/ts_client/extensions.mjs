// The scenario `extensions` of driver.mjs: a workspace's own slash command
// and a subagent over ACP. The command arrives in `available_commands_update`
// and runs ("/greet Ann"); a prompt whose model calls `task` shows the
// child's steps as the task call's content updates.
const text = (t) => ({ type: "text", text: t });

export async function extensions(agent, { seen, config, nextUpdate }) {
  const r = seen.results;
  r.initialize = await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "rhema-ts-tests", version: "1" },
  });
  const offered = nextUpdate(
    (u) =>
      u.sessionUpdate === "available_commands_update" &&
      u.availableCommands.some((c) => c.name === "greet"),
  );
  const created = await agent.request("session/new", { cwd: config.cwd, mcpServers: [] });
  const sid = created.sessionId;
  r.commands = (await offered).availableCommands;
  const greet = r.commands.find((c) => c.name === "greet");
  r.greeted = await agent.request("session/prompt", {
    sessionId: sid, prompt: [text(`/${greet.name} Ann`)],
  });
  r.tasked = await agent.request("session/prompt", { sessionId: sid, prompt: [text("find greet")] });
}
