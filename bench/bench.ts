// npm run bench: the tool's speed and memory, each figure beside its target, measured in one run.
// Appends the run to BENCHMARKS.md (newest first) and writes the per-check cost table to runner/check-costs.json.
//   node dist/bench/bench.js [--no-save]   (--no-save: print only, write nothing)
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
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
import { shardUnit } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";
import { type Figure, figure, figures, fmt, median, verdictOf } from "./figures.js";
import { loadFigures } from "./load.js";
import { ROUND_TRIPS, roundTripFigures, SAMPLE_ROUNDS, startChild, stopChild } from "./roundTrips.js";
import { measureSample, type SampleRun, sampleDir } from "./sample.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const root = here("../../");
const save = !process.argv.includes("--no-save");

/** Runs of each profile (alternated), and of --list (two per round). */
const ROUNDS = 5;
const THOROUGH_ROUNDS = 3;
/** Runs of each profile against the FOnline sample (seeds 1..N), and of its smoke. */
const SAMPLE_SEEDS = 3;

// ---------------------------------------------------------------------------------------------
// The machine and the tree, at the start

const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
const commit = git("rev-parse", "--short", "HEAD");
const dirty = git("status", "--porcelain") !== "";
// A bench started right after a test run would measure that run's tail: wait (two minutes at most) until the
// 1-minute load average is under a quarter of the cores.
const QUIET = cpus().length / 4;
const waitedFrom = Date.now();
if (loadavg()[0]! > QUIET) console.log(`waiting for the machine to settle (load average ${loadavg()[0]!.toFixed(2)})`);
while (loadavg()[0]! > QUIET && Date.now() - waitedFrom < 120_000) await new Promise((r) => setTimeout(r, 5000));
const waitedS = Math.round((Date.now() - waitedFrom) / 1000);
const load = loadavg();
const machine = `${cpus().length} cores · ${cpus()[0]?.model.trim() ?? "unknown CPU"} · node ${process.version} · load average ${load.map((l) => l.toFixed(2)).join(", ")} at start${waitedS ? ` (after waiting ${waitedS} s for it to settle)` : ""}`;
const startedAt = new Date();
console.log(`commit ${commit}${dirty ? "+dirty" : ""} · ${machine}`);
if (load[0]! > cpus().length / 2)
  console.log("note: the machine is busy (1-minute load average above half its cores); figures will be slower");

// ---------------------------------------------------------------------------------------------
// 1. Round trips: the checks' call path (Harness.call: write, transcript, judge) vs a lean raw client

// ---------------------------------------------------------------------------------------------
// 1. Round trips: the checks' call path (Harness.call: write, transcript, judge) vs a lean raw client (roundTrips.ts)

await roundTripFigures();

// ---------------------------------------------------------------------------------------------
// 2. Wall time of the CLI against the built-in bridge (process start included), and of --list

interface CheckCost {
  id: string;
  durationMs: number;
}

/** Runs the CLI that failed (another session rebuilding dist/ under it, say) that are tried again, and why. */
const retried: string[] = [];

/**
 * Wall seconds of one CLI run; a run that exits other than `expect` (0: it passed; 1 against a
 * faulty bridge) is tried again (twice at most), and then kept.
 */
function timeCli(args: string[], expect = 0): number {
  for (let attempt = 1; ; attempt++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [here("../bin.js"), ...args], { stdio: "ignore" });
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (r.status === expect) return seconds;
    const what = `${args.join(" ")} exited ${r.status ?? r.signal} after ${seconds.toFixed(2)} s`;
    retried.push(attempt < 3 ? `${what} (run again)` : `${what} (kept)`);
    console.log(`note: ${retried.at(-1)}`);
    if (attempt >= 3) return seconds;
  }
}

const reports = join(tmpdir(), `aicontrol-bench-${process.pid}`);
mkdirSync(reports, { recursive: true });
// ---------------------------------------------------------------------------------------------
// Per-check cost, measured first so the shards below are dealt by this run's table: each check
// alone on a fresh bridge (its own set-up included, none borrowed from checks before it, none
// slowed by checks beside it), which is what makes costs add up the way the deal assumes. Checks
// that share a costly bridge state are dealt to one shard together, so they are measured together:
// the first makes the state, the others take it over, as in their shard.

const COST_ROUNDS = 3;
interface RunReport {
  durationMs: number;
  rules: { checks: CheckCost[] }[];
}
/** One CLI run's JSON report, or undefined where it wrote none. */
const reportOf = (args: string[]): RunReport | undefined => {
  const json = join(reports, "run.json");
  rmSync(json, { force: true });
  timeCli([...args, "--json", json]);
  return existsSync(json) ? (JSON.parse(readFileSync(json, "utf8")) as RunReport) : undefined;
};
const together = new Map<string, string[]>();
for (const check of allChecks) {
  const key = shardUnit(check);
  together.set(key, [...(together.get(key) ?? []), check.id]);
}
const costs: Record<string, number> = {};
for (const ids of together.values()) {
  const xs = new Map<string, number[]>(ids.map((id) => [id, []]));
  for (let round = 0; round < COST_ROUNDS; round++) {
    const seed = String(round + 1);
    const report = reportOf(["--profile", "standard", "--seed", seed, ...ids.flatMap((id) => ["--check", id])]);
    // A check of several rules is listed under each of them: it is counted once.
    const listed = new Map(report?.rules.flatMap((r) => r.checks).map((c) => [c.id, c.durationMs]));
    for (const [id, ms] of listed) xs.get(id)?.push(ms);
  }
  for (const [id, ms] of xs) if (ms.length) costs[id] = Math.round(median(ms));
}

// Checks without `needs` run in a pool, where they overlap: by how much, in the shards as dealt,
// is the pool's speed-up, by which the deal divides their costs. It is what the shards' time,
// less what a run takes outside its checks (a run of one cheap check), leaves for the pooled
// checks after the serial ones, against what they cost alone.
const costTable = join(root, "runner/check-costs.json");
const writeTable = (pooledSpeedup: number) => {
  const table = {
    profile: "standard",
    measuredAt: startedAt.toISOString(),
    commit,
    measured: "each check alone on a fresh bridge, or with the checks that share its bridge state",
    pooledSpeedup: Math.round(pooledSpeedup * 100) / 100,
    costs,
  };
  const text = `${JSON.stringify(table, null, 2)}\n`;
  writeFileSync(costTable, text);
  if (existsSync(join(root, "dist/runner"))) copyFileSync(costTable, here("../runner/check-costs.json"));
};
const SHARDS = 4;
const costOf = (pooled: boolean) =>
  allChecks.filter((c) => !c.needs?.length === pooled).reduce((total, c) => total + (costs[c.id] ?? 0), 0);
const before = existsSync(costTable) ? (JSON.parse(readFileSync(costTable, "utf8")) as { pooledSpeedup?: number }) : {};
let pooledSpeedup = before.pooledSpeedup ?? 1;
const tableBackup = existsSync(costTable) ? readFileSync(costTable, "utf8") : undefined;
writeTable(pooledSpeedup); // the shards below are dealt by this run's costs
const aroundMs = median(
  Array.from({ length: COST_ROUNDS }, () => reportOf(["--check", "method.ping/ok"])?.durationMs ?? 0),
);
// The speed-up is a ratio of differences, so a shard set's noise moves it far (1.4 to 2.0 between two runs of one
// commit): the shards' time is the median of several sets, one seed each.
const shardMs = median(
  Array.from({ length: COST_ROUNDS }, (_, round) =>
    Array.from(
      { length: SHARDS },
      (_, i) =>
        reportOf(["--profile", "standard", "--seed", String(round + 1), "--shard", `${i + 1}/${SHARDS}`])?.durationMs ??
        0,
    ).reduce((a, b) => a + b, 0),
  ),
);
pooledSpeedup = Math.max(1, costOf(true) / Math.max(1, shardMs - SHARDS * aroundMs - costOf(false)));
console.log(
  `\n   pool speed-up ${pooledSpeedup.toFixed(2)}: pooled checks ${costOf(true)} ms alone, serial ${costOf(false)} ms; ` +
    `${SHARDS} shards ${shardMs} ms, of it ${SHARDS} x ${aroundMs} ms outside the checks`,
);
writeTable(pooledSpeedup);

const slowest = Object.entries(costs)
  .sort((a, b) => b[1] - a[1])
  .slice(0, 10);
console.log(`\n   the ten slowest checks (each alone on a fresh bridge, median of ${COST_ROUNDS}):`);
for (const [id, ms] of slowest) console.log(`   ${String(ms).padStart(6)} ms  ${id}`);

const wall: Record<
  "list" | "startup" | "quick" | "standard" | "slowestShard" | "thorough" | "faulty" | "slowDrain",
  number[]
> = {
  list: [],
  startup: [],
  quick: [],
  standard: [],
  slowestShard: [],
  thorough: [],
  faulty: [],
  slowDrain: [],
};
/** Bridges as their authors run the tool against them: spawned, one faulty, one at a game's tick. */
const spawnedBridge = (flags: string) => `"${process.execPath}" "${here("../bridges/reference/cli.js")}" ${flags}`;
for (let round = 0; round < ROUNDS; round++) {
  const seed = String(round + 1);
  wall.list.push(timeCli(["--list"]));
  wall.quick.push(timeCli(["--profile", "quick", "--seed", seed]));
  wall.list.push(timeCli(["--list"]));
  wall.standard.push(timeCli(["--profile", "standard", "--seed", seed]));
  // Start-up: the process, the built-in bridge, preflight and one round trip (one check: a rule may be judged by others).
  wall.startup.push(timeCli(["--check", "method.ping/ok", "--seed", seed]));
  const shards = Array.from({ length: SHARDS }, (_, i) =>
    timeCli(["--profile", "standard", "--seed", seed, "--shard", `${i + 1}/${SHARDS}`]),
  );
  wall.slowestShard.push(Math.max(...shards));
  if (round < THOROUGH_ROUNDS) wall.thorough.push(timeCli(["--profile", "thorough", "--seed", seed]));
  if (round < THOROUGH_ROUNDS) {
    // Its game loop dies on one ill-typed field: the figure holds the shrinking and the rechecks.
    wall.faulty.push(timeCli(["--spawn", spawnedBridge("--mutant drain-dies-on-ill-typed"), "--seed", seed], 1));
    // A conformant bridge completing one command per 20 ms (a 50 Hz game tick).
    wall.slowDrain.push(timeCli(["--spawn", spawnedBridge("--drain-ms 20"), "--seed", seed]));
  }
  console.log(`   profiles: round ${round + 1} of ${ROUNDS} done`);
}
rmSync(reports, { recursive: true, force: true });
const seconds = { unit: " s", digits: 2 };
figure({
  figure: "2. quick profile, wall time",
  samples: wall.quick,
  ...seconds,
  target: "<= 2.5 s",
  ok: (m) => m <= 2.5,
});
figure({
  figure: "   standard profile, wall time",
  samples: wall.standard,
  ...seconds,
  target: "<= 8 s",
  ok: (m) => m <= 8,
});
figure({
  figure: "   start-up (--check method.ping/ok), wall time",
  samples: wall.startup,
  ...seconds,
  target: "(information)",
});
figure({
  figure: `   slowest of ${SHARDS} standard shards, wall time`,
  samples: wall.slowestShard,
  ...seconds,
  target: `<= 1.3 x standard/${SHARDS} + start-up = ${(1.3 * (median(wall.standard) / SHARDS) + median(wall.startup)).toFixed(2)} s`,
  ok: (m) => m <= 1.3 * (median(wall.standard) / SHARDS) + median(wall.startup),
});
figure({
  figure: "   thorough profile, wall time",
  samples: wall.thorough,
  ...seconds,
  target: "<= 60 s",
  ok: (m) => m <= 60,
});
figure({
  figure: "   standard, spawned bridge whose game loop dies on one ill-typed field, wall time",
  samples: wall.faulty,
  ...seconds,
  target: "<= 15 s",
  ok: (m) => m <= 15,
});
figure({
  figure: "   standard, spawned reference bridge draining every 20 ms, wall time",
  samples: wall.slowDrain,
  ...seconds,
  target: "<= one history fill + 6 s = 16.3 s",
  ok: (m) => m <= 16.3,
});
figure({
  figure: "   --list, wall time",
  samples: wall.list,
  ...seconds,
  digits: 3,
  target: "<= 0.3 s",
  ok: (m) => m <= 0.3,
});

// 5. The same verdicts on a busy machine (bench/load.ts): run here, while the tree's build is at hand.
const underLoad = await loadFigures();
for (const f of underLoad.figures) figure(f);

// ---------------------------------------------------------------------------------------------
// 2b. The FOnline sample bridge (FONLINE_DIR), spawned as a user first runs the tool, beside its own smoke

const fonline = sampleDir();
if (typeof fonline !== "string") console.log(`   the FOnline sample is skipped: ${fonline.missing}`);
else {
  const sample = measureSample(fonline, SAMPLE_SEEDS);
  const wallOf = (xs: SampleRun[]) => xs.map((r) => r.wallS);
  const cpuOf = (xs: SampleRun[]) => xs.flatMap((r) => (r.cpuS === undefined ? [] : [r.cpuS]));
  const receivedOf = (xs: SampleRun[]) => xs.flatMap((r) => (r.receivedMiB === undefined ? [] : [r.receivedMiB]));
  const info = { target: "(information)" };
  figure({
    figure: "2b. FOnline sample, standard, spawned, wall time",
    samples: wallOf(sample.standard),
    ...seconds,
    target: "<= 15 s",
    ok: (m) => m <= 15,
  });
  figure({
    figure: "   FOnline sample, quick, spawned, wall time",
    samples: wallOf(sample.quick),
    ...seconds,
    target: "<= 5 s",
    ok: (m) => m <= 5,
  });
  figure({
    figure: "   FOnline sample's own smoke (run_protocol_smoke.py), wall time",
    samples: wallOf(sample.smoke),
    ...seconds,
    ...info,
  });
  figure({
    figure: "   FOnline sample, standard, CPU (user+sys, tool and bridges)",
    samples: cpuOf(sample.standard),
    ...seconds,
    ...info,
  });
  figure({
    figure: "   FOnline sample, quick, CPU (user+sys, tool and bridges)",
    samples: cpuOf(sample.quick),
    ...seconds,
    ...info,
  });
  figure({
    figure: "   FOnline sample, standard, received",
    samples: receivedOf(sample.standard),
    unit: " MiB",
    digits: 1,
    ...info,
  });
  figure({
    figure: "   FOnline sample, quick, received",
    samples: receivedOf(sample.quick),
    unit: " MiB",
    digits: 1,
    ...info,
  });
}

// ---------------------------------------------------------------------------------------------
// 3. Peak RSS while a 256 MiB line with no LF streams in (and 256 MiB streams out)

function rssKiB(args: string[]): number {
  const out = execFileSync(process.execPath, [here("./memoryProbe.js"), ...args], { encoding: "utf8" });
  return (JSON.parse(out.trim().split("\n").at(-1)!) as { maxRssKiB: number }).maxRssKiB;
}

const streamer = await startChild(process.execPath, [here("./streamer.js"), String(256 * 1_048_576)]);
const idle = rssKiB(["idle"]) / 1024;
const streaming = rssKiB(["stream", String(streamer.port)]) / 1024;
await stopChild(streamer.child);
const mib = { unit: " MiB", digits: 1 };
figure({ figure: "3. peak RSS idle", samples: [idle], ...mib, target: "(baseline)" });
figure({
  figure: "   peak RSS streaming 256 MiB without LF",
  samples: [streaming],
  ...mib,
  target: `<= baseline + 20 MiB`,
  ok: (m) => m - idle <= 20,
});

// ---------------------------------------------------------------------------------------------
// 4. Generated cases per second (information)

function casesPerSecond(arb: fc.Arbitrary<unknown>): number {
  let cases = 0;
  const t0 = Date.now();
  while (Date.now() - t0 < 500) {
    fc.sample(arb, { numRuns: 200, seed: cases });
    cases += 200;
  }
  return cases / ((Date.now() - t0) / 1000);
}

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
  figure({
    figure: `4. ${name}, cases/s`,
    samples: [casesPerSecond(arb)],
    unit: "",
    digits: 0,
    target: "(information)",
  });

// ---------------------------------------------------------------------------------------------
// BENCHMARKS.md: every run kept, newest first, right under the title

const file = join(root, "BENCHMARKS.md");
const header =
  "# Benchmarks\n\n`npm run bench` appends a run here, newest first. Figures are from this project's 2-core machine unless noted.\n";
const cell = (f: Figure, x: number) => (f.samples.length > 1 ? fmt(x, f) : "");
const table = [
  "| figure | median | min | max | n | target | |",
  "| --- | ---: | ---: | ---: | ---: | --- | --- |",
  ...figures.map(
    (f) =>
      `| ${f.figure.trim()} | ${fmt(median(f.samples), f)} | ${cell(f, Math.min(...f.samples))} | ${cell(f, Math.max(...f.samples))} | ${f.samples.length} | ${f.target} | ${verdictOf(f)} |`,
  ),
].join("\n");
const section = [
  `\n## ${startedAt.toISOString()}\n`,
  `- commit: ${commit}${dirty ? "+dirty" : ""}`,
  `- machine: ${machine}`,
  `- method: ${ROUND_TRIPS} ping round trips per sample, the raw client, the raw client again, the raw client with JSON.stringify/parse, and Harness.call in turn, each round starting one later (one warm-up round, then ${SAMPLE_ROUNDS} rounds) on each bridge in a child process; profiles alternated (${ROUNDS} quick, ${ROUNDS} standard, ${wall.thorough.length} thorough; seeds 1..${ROUNDS}), --list twice per round, start-up and the ${SHARDS} standard shards (run one after another) once per round; ${typeof fonline === "string" ? `the FOnline sample (${fonline}) spawned, standard and quick with seeds 1..${SAMPLE_SEEDS} alternated, its smoke after each pair, CPU by GNU time (the tool and every bridge it started); ` : `the FOnline sample skipped (${fonline.missing}); `}${retried.length ? `CLI runs that exited non-zero: ${retried.join("; ")}; ` : ""}${underLoad.method}; ${underLoad.notes.length ? `changed or failing verdicts: ${underLoad.notes.join("; ")}; ` : ""}per-check costs (each check alone on a fresh bridge, or with the checks that share its bridge state, median of ${COST_ROUNDS}, measured before the shards, which are dealt by them; pooled checks count 1/${pooledSpeedup.toFixed(2)}, the pool's speed-up in the shards, median of ${COST_ROUNDS} sets) in runner/check-costs.json (ten slowest: ${slowest.map(([id, ms]) => `${id} ${ms} ms`).join(", ")})\n`,
  table,
  "",
].join("\n");
if (save) {
  const previous = existsSync(file) ? readFileSync(file, "utf8") : header;
  const rest = previous.startsWith(header) ? previous.slice(header.length) : `\n${previous}`;
  writeFileSync(file, header + section + rest);
  // The table as the project's formatter lays it out, so the linter stays clean after a run.
  spawnSync(join(root, "node_modules/.bin/biome"), ["format", "--write", file], { cwd: root, stdio: "ignore" });
  console.log("\nappended to BENCHMARKS.md; costs written to runner/check-costs.json");
} else {
  // --no-save writes nothing: the cost table the shards above were dealt by goes back as it was.
  if (tableBackup === undefined) rmSync(costTable);
  else {
    writeFileSync(costTable, tableBackup);
    if (existsSync(join(root, "dist/runner"))) copyFileSync(costTable, here("../runner/check-costs.json"));
  }
}
