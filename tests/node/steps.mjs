// Drives an ACP agent through a list of steps with the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0), one process per run, so a test can use several processes on
// one session (tests/acp_server/test_sdk_clients.py).
// usage: node steps.mjs '<steps as JSON>' <cwd> <agent command...>
// A step is {"do": "new"} | {"do": "load", "sessionId": ID} | {"do": "prompt", "text": T}
//   | {"do": "waitFor", "update": KIND} | {"do": "setConfig", "configId": C, "value": V}.
// Prints one JSON report line on stdout: the answers, and every session/update in order as the
// SDK parsed it. Exits non-zero if the SDK rejected anything the agent sent.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { readFile, writeFile } from "node:fs/promises";
import * as acp from "@agentclientprotocol/sdk";

const [stepsJson, cwd, command, ...args] = process.argv.slice(2);
const steps = JSON.parse(stepsJson);
const sdkErrors = [];
const originalError = console.error;
console.error = (...items) => {
  sdkErrors.push(items.map((item) => (typeof item === "string" ? item : JSON.stringify(item))).join(" "));
  originalError(...items);
};

const report = { answers: [], updates: [] };
const waiters = [];
const agent = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const app = acp
  .client({ name: "earshot-node-steps" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    report.updates.push(params.update);
    for (const waiter of waiters.splice(0)) waiter();
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
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

async function waitFor(kind) {
  while (!report.updates.some((u) => u.sessionUpdate === kind)) {
    await new Promise((resolve) => waiters.push(resolve));
  }
}

await app.connectWith(stream, async (ctx) => {
  await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "earshot-node-steps", version: "0" },
  });
  let sessionId = null;
  for (const step of steps) {
    let answer;
    switch (step.do) {
      case "new":
        answer = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
        sessionId = answer.sessionId;
        break;
      case "load":
        sessionId = step.sessionId;
        answer = await ctx.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
        break;
      case "prompt":
        answer = await ctx.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: step.text }],
        });
        break;
      case "waitFor":
        await waitFor(step.update);
        answer = null;
        break;
      case "setConfig":
        answer = await ctx.request(acp.methods.agent.session.setConfigOption, {
          sessionId,
          configId: step.configId,
          value: step.value,
        });
        break;
      default:
        throw new Error(`unknown step ${step.do}`);
    }
    report.answers.push(answer ?? null);
  }
  report.sessionId = sessionId;
});
report.sdkErrors = sdkErrors;
agent.stdin.end();
await new Promise((resolve) => agent.on("exit", resolve));
console.log(JSON.stringify(report));
process.exit(sdkErrors.length ? 1 : 0);
