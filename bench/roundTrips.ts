// Round trips: the checks' call path (Harness.call: write, transcript, judge) vs a lean raw client, on bridges in
// child processes.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { connect } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { contract } from "../protocol/contract.js";
import { Harness } from "../suites/harness/harness.js";
import { figure } from "./figures.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const root = here("../../");

/**
 * Round trips per sample of the call-path figure, and rounds of samples per bridge (after one warm-up round), each
 * round a sample of every client. Short samples, many rounds, the order within a round turned: this machine's speed
 * drifts (a virtual CPU's idle polling adapts to the traffic), and a drift then weighs on every client alike. A round
 * of 250 round trips a client spans about 0.1 s; with 2000 it spanned 0.7 s, and the median ratio of a run moved by
 * 0.03 between runs, as much as the difference it is there to show.
 */
export const ROUND_TRIPS = 250;
export const SAMPLE_ROUNDS = 300;

/** A bridge in a child process, so it does not share the measuring process's event loop. */
export async function startChild(cmd: string, args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const env = { ...process.env };
  delete env[contract.defaults.tokenEnv]; // no token: every call is a plain round trip
  const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"], env });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    const onData = (d: Buffer) => {
      out += d.toString("utf8");
      const nl = out.indexOf("\n");
      if (nl === -1) return;
      child.stdout!.off("data", onData);
      resolve((JSON.parse(out.slice(out.indexOf("{"), nl)) as { port: number }).port);
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${cmd} ${args.join(" ")} exited (${code})`)));
  });
  return { child, port };
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}

const pingLine = (id: number) => `{"jsonrpc":"${contract.jsonrpc}","id":${id},"method":"ping","params":{}}\n`;

/** Round trips per second, and this process's CPU time (user + system) per round trip in microseconds. */
interface Rate {
  perSecond: number;
  cpuUs: number;
}

const cpuUs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / ROUND_TRIPS;
};

/**
 * A bare net client: one data listener for the whole run, counting LFs. With `json`, it also does what no client
 * that checks replies can skip: each request made with JSON.stringify, each reply line read with JSON.parse. That
 * is the floor under the checks' call path; the rest of the call path is the tool's own.
 */
async function rawRate(port: number, json = false): Promise<Rate> {
  const socket = connect({ host: "127.0.0.1", port, noDelay: true });
  await once(socket, "connect");
  let received = 0;
  let wanted = 0;
  let partial = "";
  let wake: (() => void) | undefined;
  socket.on("data", (d: Buffer) => {
    let from = 0;
    for (let at = d.indexOf(0x0a); at !== -1; at = d.indexOf(0x0a, at + 1)) {
      if (json) JSON.parse(partial + d.toString("utf8", from, at));
      partial = "";
      from = at + 1;
      received++;
    }
    if (json && from < d.length) partial += d.toString("utf8", from);
    if (wake && received >= wanted) {
      const w = wake;
      wake = undefined;
      w();
    }
  });
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ROUND_TRIPS; i++) {
    wanted = i + 1;
    socket.write(
      json ? `${JSON.stringify({ jsonrpc: contract.jsonrpc, id: i, method: "ping", params: {} })}\n` : pingLine(i),
    );
    if (received < wanted) await new Promise<void>((resolve) => (wake = resolve));
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = cpuUs(cpu0);
  socket.destroy();
  return { perSecond: ROUND_TRIPS / seconds, cpuUs: cpu };
}

/** Harness.call inside one case, with a Harness built as the runner builds one per check. */
async function toolRate(port: number): Promise<Rate> {
  const harness = new Harness({
    contract,
    endpoint: { host: "127.0.0.1", port },
    timeoutMs: 2000,
    runs: 100,
    timeBudgetMs: 20_000,
    seed: 1,
    deadline: Date.now() + 120_000,
  });
  let seconds = 0;
  let cpu = 0;
  const finding = await harness.runCase(async () => {
    const conn = await harness.session();
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < ROUND_TRIPS; i++) {
      const reply = await harness.call(conn, { jsonrpc: contract.jsonrpc, id: i, method: "ping", params: {} });
      if (reply.kind !== "response" || (reply.response.result as { ok?: unknown } | undefined)?.ok !== true)
        return { verdict: "error", message: `round trip ${i}: no pong` };
    }
    seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    cpu = cpuUs(cpu0);
    return { verdict: "pass", message: "" };
  });
  harness.stop();
  if (finding.verdict !== "pass") throw new Error(finding.message);
  return { perSecond: ROUND_TRIPS / seconds, cpuUs: cpu };
}

/** Section 1 of the bench: the call-path figures of each bridge. */
export async function roundTripFigures(): Promise<void> {
  const bridges: [string, string, string[]][] = [
    ["Node reference bridge", process.execPath, [here("../bridges/reference/cli.js")]],
    ["Python bridge (bridges/python/bridge.py)", "python3", [join(root, "bridges/python/bridge.py"), "--port", "0"]],
  ];
  for (const [name, cmd, args] of bridges) {
    const bridge = await startChild(cmd, args);
    // One warm-up round, not counted; then each round takes the clients in turn, starting one later each time. The raw
    // client runs twice a round: the second against the first is the method's own error, what no client changes.
    const clients = [
      () => rawRate(bridge.port),
      () => rawRate(bridge.port),
      () => rawRate(bridge.port, true),
      () => toolRate(bridge.port),
    ];
    for (const client of clients) await client();
    const samples: Rate[][] = clients.map(() => []);
    for (let i = 0; i < SAMPLE_ROUNDS; i++) {
      for (let k = 0; k < clients.length; k++) {
        const c = (i + k) % clients.length;
        samples[c]!.push(await clients[c]!());
      }
    }
    const [raw, again, json, tool] = samples as [Rate[], Rate[], Rate[], Rate[]];
    await stopChild(bridge.child);
    const info = { unit: "", digits: 0, target: "(information)" };
    const cpu = { unit: " µs", digits: 1, target: "(information)" };
    figure({ figure: `1. ${name}: raw net client, round trips/s`, samples: raw.map((r) => r.perSecond), ...info });
    figure({ figure: `   ${name}: Harness.call, round trips/s`, samples: tool.map((r) => r.perSecond), ...info });
    figure({
      figure: `   ${name}: Harness.call / raw (paired)`,
      samples: tool.map((t, i) => t.perSecond / raw[i]!.perSecond),
      unit: "",
      digits: 2,
      target: ">= 0.90",
      ok: (m) => m >= 0.9,
    });
    figure({
      figure: `   ${name}: raw / raw (paired; the method's own error)`,
      samples: again.map((a, i) => a.perSecond / raw[i]!.perSecond),
      unit: "",
      digits: 2,
      target: "(information)",
    });
    figure({
      figure: `   ${name}: raw with JSON.stringify/parse / raw (paired; the floor)`,
      samples: json.map((j, i) => j.perSecond / raw[i]!.perSecond),
      unit: "",
      digits: 2,
      target: "(information)",
    });
    figure({ figure: `   ${name}: raw, client CPU per round trip`, samples: raw.map((r) => r.cpuUs), ...cpu });
    figure({
      figure: `   ${name}: Harness.call, client CPU per round trip`,
      samples: tool.map((r) => r.cpuUs),
      ...cpu,
    });
  }
}
