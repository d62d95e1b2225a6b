// Drives an ACP agent with the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0).
// usage: node client.mjs <cwd> <agent command...>
// Prints one JSON report line on stdout; exits non-zero if the SDK rejected anything the agent sent.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { readFile, writeFile } from "node:fs/promises";
import * as acp from "@agentclientprotocol/sdk";

const [cwd, command, ...args] = process.argv.slice(2);
const sdkErrors = [];
const originalError = console.error;
console.error = (...items) => {
  sdkErrors.push(items.map((item) => (typeof item === "string" ? item : JSON.stringify(item))).join(" "));
  originalError(...items);
};

const agent = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
let permissionToolCall = null;
const permissions = [];
const app = acp
  .client({ name: "earshot-node-test" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissionToolCall = params.toolCall.toolCallId;
    // What a client shows before approval: the title and the content's text.
    permissions.push({
      title: params.toolCall.title,
      texts: (params.toolCall.content ?? [])
        .filter((c) => c.type === "content" && c.content.type === "text")
        .map((c) => c.content.text),
      options: params.options.map((o) => ({ optionId: o.optionId, kind: o.kind })),
    });
    const option = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => ({
    content: await readFile(params.path, "utf8"),
  }))
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    await writeFile(params.path, params.content);
    return {};
  });

const report = { updates: [], text: "" };
await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "earshot-node-test", version: "0" },
  });
  report.protocolVersion = init.protocolVersion;
  await ctx.buildSession(cwd).withSession(async (session) => {
    const done = session.prompt("write it");
    for (let message; (message = await session.nextUpdate()).kind !== "stop"; ) {
      const update = message.update;
      report.updates.push(update.sessionUpdate);
      if (update.sessionUpdate === "agent_message_chunk") report.text += update.content.text;
    }
    report.stopReason = (await done).stopReason;
  });
});
report.permissionToolCall = permissionToolCall;
report.permissions = permissions;
report.sdkErrors = sdkErrors;
agent.stdin.end();
await new Promise((resolve) => agent.on("exit", resolve));
console.log(JSON.stringify(report));
process.exit(sdkErrors.length ? 1 : 0);
