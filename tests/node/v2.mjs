// Drives an ACP agent over ACP v2 with the official TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0), from its `/experimental/v2/unstable` entry point (tests/acp_server/test_sdk_v2.py).
// usage: node v2.mjs <cwd> <agent command...>
// One session: a prompt whose edit asks permission, a prompt whose command the client cancels
// (`tool_call/cancel`), the mode set through its config option; then `session/list`, a
// `session/resume` replaying the conversation, `session/fork` and `session/close`.
// Prints one JSON report line on stdout, with every line each side wrote (`sent`, `received`)
// for the test to validate against the v2 schema. Exits non-zero if the SDK rejected anything.
import { spawn } from "node:child_process";
import { PassThrough, Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2/unstable";

const [cwd, command, ...args] = process.argv.slice(2);
const sdkErrors = [];
const originalError = console.error;
console.error = (...items) => {
  sdkErrors.push(items.map((item) => (typeof item === "string" ? item : JSON.stringify(item))).join(" "));
  originalError(...items);
};

const agent = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
const report = { sent: [], received: [], updates: [], permissions: [], stops: [] };

// Both directions recorded line by line, as they crossed the pipes.
function lines(into) {
  let buffer = "";
  return (chunk) => {
    buffer += chunk.toString("utf8");
    let end;
    while ((end = buffer.indexOf("\n")) >= 0) {
      if (end > 0) into.push(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
    }
  };
}
const fromAgent = new PassThrough();
agent.stdout.on("data", lines(report.received));
agent.stdout.pipe(fromAgent);
const toAgent = new PassThrough();
toAgent.on("data", lines(report.sent));
toAgent.pipe(agent.stdin);

const stream = acp.ndJsonStream(Writable.toWeb(toAgent), Readable.toWeb(fromAgent));
const app = acp
  .client({ name: "earshot-node-v2" })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    report.permissions.push({
      title: params.title,
      subject: params.subject?.type,
      toolCallId: params.subject?.toolCall?.toolCallId,
    });
    const option = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: option.optionId } };
  });

// Reads the session's updates until its next idle `state_update`; `each` sees every update.
async function untilIdle(session, each = async () => {}) {
  for (;;) {
    const message = await session.nextUpdate();
    report.updates.push(message.update);
    if (message.kind === "stop") {
      report.stops.push(message.stopReason);
      return;
    }
    await each(message.update);
  }
}

await app.connectWith(stream, async (ctx) => {
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "earshot-node-v2", version: "0" },
    capabilities: {},
  });
  report.protocolVersion = init.protocolVersion;
  report.fork = Boolean(init.capabilities?.session?.fork);
  let sessionId;
  await ctx.buildSession(cwd).withSession(async (session) => {
    sessionId = session.sessionId;
    report.modes = (session.configOptions ?? []).filter((o) => o.configId === "mode").map((o) => o.currentValue);
    report.inserted = (await session.prompt("write it")).messageId;
    await untilIdle(session);

    await session.prompt("run it");
    // Cancelled once it can be and has printed something (its terminal's first output).
    let running = null;
    let printed = false;
    let cancelled = false;
    await untilIdle(session, async (update) => {
      if (update.sessionUpdate === "tool_call_update" && session.canCancelToolCall(update.toolCallId)) {
        running = update.toolCallId;
      }
      printed ||= update.sessionUpdate === "terminal_output_chunk";
      if (!cancelled && running !== null && printed) {
        cancelled = true;
        report.cancelAnswer = await session.cancelToolCall(running);
      }
    });

    const set = await session.setConfigOption({ configId: "mode", type: "id", value: "plan" });
    report.modes.push(set.configOptions.find((o) => o.configId === "mode").currentValue);
  });
  const listed = await ctx.request(acp.methods.agent.session.list, { cwd });
  report.listed = listed.sessions.map((s) => s.sessionId);
  report.sessionId = sessionId;
  await ctx.request(acp.methods.agent.session.resume, { sessionId, cwd, replayFrom: { type: "start" } });
  const forked = await ctx.request(acp.methods.agent.session.fork, { sessionId, cwd });
  report.forked = forked.sessionId;
  report.forkModes = forked.configOptions.filter((o) => o.configId === "mode").map((o) => o.currentValue);
  await ctx.request(acp.methods.agent.session.close, { sessionId });
});
report.sdkErrors = sdkErrors;
toAgent.end();
await new Promise((resolve) => agent.on("exit", resolve));
console.log(JSON.stringify(report));
process.exit(sdkErrors.length ? 1 : 0);
