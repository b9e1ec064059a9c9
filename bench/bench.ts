// npm run bench: the figures issue #5 asks for, each beside its target. Appends the run to BENCHMARKS.md.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { cpus } from "node:os";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { badEnvelope } from "../generators/badEnvelope.js";
import { command } from "../generators/command.js";
import { malformedUtf8 } from "../generators/malformedUtf8.js";
import { nonStandardJson } from "../generators/nonStandardJson.js";
import { oversizedLine } from "../generators/oversizedLine.js";
import { requestId } from "../generators/requestId.js";
import { unauthorizedCall } from "../generators/unauthorizedCall.js";
import { unknownMethod } from "../generators/unknownMethod.js";
import { validRequest } from "../generators/validRequest.js";
import { Connection } from "../suites/harness/connection.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const ROUND_TRIPS = 20_000;

async function startChild(script: string, args: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [here(script), ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once("data", (d: Buffer) =>
      resolve((JSON.parse(d.toString().slice(d.indexOf("{"))) as { port: number }).port),
    );
    child.once("exit", () => reject(new Error(`${script} exited`)));
  });
  return { child, port };
}

/** Round trips per second with a bare net client: the wire's limit on this machine. */
async function rawRate(port: number): Promise<number> {
  const socket = connect({ host: "127.0.0.1", port, noDelay: true });
  await new Promise((r) => socket.once("connect", r));
  let buffered = "";
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ROUND_TRIPS; i++) {
    socket.write(`{"jsonrpc":"2.0","id":${i},"method":"ping","params":{}}\n`);
    await new Promise<void>((resolve) => {
      const onData = (d: Buffer) => {
        buffered += d.toString("utf8");
        const nl = buffered.indexOf("\n");
        if (nl === -1) return;
        buffered = buffered.slice(nl + 1);
        socket.off("data", onData);
        resolve();
      };
      socket.on("data", onData);
    });
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  socket.destroy();
  return ROUND_TRIPS / seconds;
}

/** Round trips per second through the tool's Connection (transcript off, as in a bench; on, as in a run). */
async function toolRate(port: number, record: boolean): Promise<number> {
  const conn = await Connection.open("127.0.0.1", port, { maxLineBytes: 1_048_576, connectTimeoutMs: 2000, record });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const r = await conn.exchange(`{"jsonrpc":"2.0","id":${i},"method":"ping","params":{}}`, 2000);
    if (r.kind !== "line") throw new Error(`round trip ${i}: ${r.kind}`);
    if (record && conn.transcript.length > 1000) conn.transcript.length = 0;
  }
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  conn.close();
  return ROUND_TRIPS / seconds;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timeCli(profile: string): number {
  const t0 = Date.now();
  execFileSync(process.execPath, [here("../bin.js"), "--profile", profile, "--seed", "1"], { stdio: "ignore" });
  return (Date.now() - t0) / 1000;
}

function rssKiB(args: string[]): number {
  const out = execFileSync(process.execPath, [here("./memoryProbe.js"), ...args], { encoding: "utf8" });
  return (JSON.parse(out.trim().split("\n").at(-1)!) as { maxRssKiB: number }).maxRssKiB;
}

function casesPerSecond(arb: fc.Arbitrary<unknown>): number {
  let cases = 0;
  const t0 = Date.now();
  while (Date.now() - t0 < 500) {
    fc.sample(arb, { numRuns: 200, seed: cases });
    cases += 200;
  }
  return cases / ((Date.now() - t0) / 1000);
}

const rows: [string, string, string, string][] = [];
const row = (figure: string, value: string, target: string, ok: boolean | undefined) => {
  rows.push([figure, value, target, ok === undefined ? "" : ok ? "met" : "MISSED"]);
  console.log(
    `${figure.padEnd(48)} ${value.padStart(14)}   target ${target}${ok === undefined ? "" : ok ? "   met" : "   MISSED"}`,
  );
};

// 1. Sequential request rate, tool vs raw, alternating to share the machine's noise.
const fast = await startChild("./fastBridge.js");
const raw: number[] = [];
const tool: number[] = [];
for (let i = 0; i < 5; i++) {
  raw.push(await rawRate(fast.port));
  tool.push(await toolRate(fast.port, false));
}
const recorded = await toolRate(fast.port, true);
fast.child.kill();
row("1. round trips/s, raw net client", median(raw).toFixed(0), "the wire's limit", undefined);
row("   round trips/s, tool Connection", median(tool).toFixed(0), ">= 0.9 of raw", median(tool) / median(raw) >= 0.9);
row("   ratio tool / raw", (median(tool) / median(raw)).toFixed(2), ">= 0.90", median(tool) / median(raw) >= 0.9);
row("   round trips/s, tool with transcript", recorded.toFixed(0), "(as in a run)", undefined);

// 2. Wall time of the profiles against the built-in reference bridge (process start included).
const quick = timeCli("quick");
row("2. quick profile, wall time", `${quick.toFixed(1)} s`, "< 10 s", quick < 10);
const standard = timeCli("standard");
row("   standard profile, wall time", `${standard.toFixed(1)} s`, "< 60 s", standard < 60);

// 3. Peak RSS while a 256 MiB line with no LF streams in (and 256 MiB streams out).
const streamer = await startChild("./streamer.js", [String(256 * 1_048_576)]);
const idle = rssKiB(["idle"]);
const streaming = rssKiB(["stream", String(streamer.port)]);
streamer.child.kill();
const overMiB = (streaming - idle) / 1024;
row("3. peak RSS idle (MiB)", (idle / 1024).toFixed(1), "baseline", undefined);
row("   peak RSS streaming 256 MiB no-LF (MiB)", (streaming / 1024).toFixed(1), "<= baseline + 20", overMiB <= 20);

// 4. Generated cases per second.
const generators: [string, fc.Arbitrary<unknown>][] = [
  ["malformedUtf8", malformedUtf8()],
  ["nonStandardJson", nonStandardJson()],
  ["oversizedLine", oversizedLine()],
  ["badEnvelope", badEnvelope()],
  ["unauthorizedCall", unauthorizedCall()],
  ["validRequest", validRequest()],
  ["requestId", requestId()],
  ["unknownMethod", unknownMethod()],
  ["command", command({ illTyped: true })],
];
for (const [name, arb] of generators)
  row(`4. ${name} cases/s`, casesPerSecond(arb).toFixed(0), "(information)", undefined);

// Keep every run in BENCHMARKS.md, newest first, so regressions show.
const file = here("../../BENCHMARKS.md");
const header =
  "# Benchmarks\n\n`npm run bench` appends a run here, newest first. Figures are from this project's 2-core machine unless noted.\n";
const previous = existsSync(file) ? readFileSync(file, "utf8").replace(header, "") : "";
const table = [
  "| figure | value | target | |",
  "| --- | ---: | --- | --- |",
  ...rows.map((r) => `| ${r.join(" | ")} |`),
].join("\n");
const section = `\n## ${new Date().toISOString()} · node ${process.version} · ${cpus().length} cores\n\nCommand: \`npm run bench\`\n\n${table}\n`;
if (!process.argv.includes("--no-save")) writeFileSync(file, header + section + previous);
