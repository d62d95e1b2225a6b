// Drives an ACP agent through ACP v1's unstable surface with the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0, its `/unstable` entry point, which validates every message
// against schema.unstable.json): plans and subagents as advertised client capabilities,
// auth/status and its update, an MCP server provided over ACP (McpOverAcpProvider), a
// systemPrompt, session/set_title, session/status, session/archive|unarchive and the archived
// filter of session/list (tests/acp_server/test_sdk_clients.py).
// usage: node unstable.mjs <cwd> <agent command...>
// Prints one JSON report line on stdout; exits non-zero if the SDK rejected anything the agent sent.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { readFile, writeFile } from "node:fs/promises";
import * as acp from "@agentclientprotocol/sdk/unstable";

const [cwd, command, ...args] = process.argv.slice(2);
const sdkErrors = [];
const originalError = console.error;
console.error = (...items) => {
  sdkErrors.push(items.map((item) => (typeof item === "string" ? item : JSON.stringify(item))).join(" "));
  originalError(...items);
};

const report = { updates: [], authUpdates: [], mcp: [], permissions: [] };
const waiters = [];
const wake = () => {
  for (const waiter of waiters.splice(0)) waiter();
};
async function until(predicate) {
  while (!predicate()) await new Promise((resolve) => waiters.push(resolve));
}

const agent = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const mcp = new acp.McpOverAcpProvider();
const cached = { ttlMs: 0, cacheScope: "private", resultType: "complete" };
const app = acp
  .client({ name: "earshot-node-unstable" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    report.updates.push({ sessionId: params.sessionId, update: params.update });
    wake();
  })
  .onNotification(acp.methods.client.auth.statusUpdate, ({ params }) => {
    report.authUpdates.push(params);
    wake();
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    report.permissions.push({ sessionId: params.sessionId, toolCallId: params.toolCall.toolCallId });
    const option = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest(acp.methods.client.mcp.message, mcp.handleRequest)
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => ({
    content: await readFile(params.path, "utf8"),
  }))
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    await writeFile(params.path, params.content);
    return {};
  });

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: true, writeTextFile: true },
      terminal: false,
      plan: {},
      subagents: {},
    },
    clientInfo: { name: "earshot-node-unstable", version: "0" },
  });
  report.agentCapabilities = init.agentCapabilities;
  report.authStatus = await ctx.request(acp.methods.agent.auth.status, {});

  // An MCP server of this client's, reached over the ACP connection (MCP 2026-07-28).
  const notes = mcp.registerServer(ctx, {
    name: "notes",
    handler: async (operation) => {
      report.mcp.push(operation.method);
      switch (operation.method) {
        case "server/discover":
          return {
            result: { supportedVersions: ["2026-07-28"], capabilities: { tools: {} }, ...cached },
          };
        case "tools/list":
          return {
            result: {
              tools: [
                {
                  name: "add",
                  description: "Add a note.",
                  inputSchema: { type: "object", properties: { text: { type: "string" } } },
                },
              ],
              ...cached,
            },
          };
        case "tools/call":
          return {
            result: {
              content: [{ type: "text", text: `noted: ${operation.params.arguments.text}` }],
              resultType: "complete",
            },
          };
        default:
          throw new acp.McpProtocolError(-32601, `no method ${operation.method}`);
      }
    },
  });

  const created = await ctx.request(acp.methods.agent.session.new, {
    cwd,
    mcpServers: [notes.declaration],
    systemPrompt: { mode: "append", content: [{ type: "text", text: "Be brief." }] },
  });
  const sessionId = created.sessionId;
  report.sessionId = sessionId;
  report.prompt = await ctx.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "go" }],
  });
  report.title = await ctx.request(acp.methods.agent.session.setTitle, {
    sessionId,
    title: "  From the SDK  ",
  });
  report.status = await ctx.request(acp.methods.agent.session.status, { sessionId });
  report.listed = await ctx.request(acp.methods.agent.session.list, {});
  await ctx.request(acp.methods.agent.session.archive, { sessionId });
  report.afterArchive = await ctx.request(acp.methods.agent.session.list, {});
  report.archivedOnly = await ctx.request(acp.methods.agent.session.list, { archived: "only" });
  await ctx.request(acp.methods.agent.session.unarchive, { sessionId });
  report.afterUnarchive = await ctx.request(acp.methods.agent.session.list, {});
  report.statusAfterArchive = await ctx.request(acp.methods.agent.session.status, { sessionId });
  // The scripted provider turned off: the credentials changed, and the client is told.
  await ctx.request(acp.methods.agent.providers.disable, { providerId: "scripted-test" });
  await until(() => report.authUpdates.length > 0);
  await notes.dispose();
});
report.sdkErrors = sdkErrors;
agent.stdin.end();
await new Promise((resolve) => agent.on("exit", resolve));
console.log(JSON.stringify(report));
process.exit(sdkErrors.length ? 1 : 0);
