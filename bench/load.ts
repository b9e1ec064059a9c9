// The bench's load mode: the standard profile against conformant targets, once on a quiet machine and once
// while busy processes (twice the cores) compete for the CPU. A verdict that the load changed is a false one:
// the figure must be 0. The slowdown is the loaded run's wall time over the quiet run's.
//   node dist/bench/load.js [--seeds N]   (alone: prints the figures; bench.ts calls loadFigures)
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Figure } from "./figures.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const root = here("../../");

interface Target {
  name: string;
  args: string[];
}

/** The conformant targets: bridges as their authors run the tool, and client mode against conformant clients. */
function targets(env: NodeJS.ProcessEnv): Target[] {
  const node = `"${process.execPath}"`;
  const list: Target[] = [
    { name: "built-in reference bridge", args: [] },
    { name: "Python bridge", args: ["--spawn", "python3 bridges/python/bridge.py --port 0"] },
    {
      name: "reference bridge draining every 20 ms",
      args: ["--spawn", `${node} ${here("../bridges/reference/cli.js")} --drain-ms 20`],
    },
    {
      name: "client mode, the project's reference client",
      args: [
        "client",
        "--exec",
        `${node} ${here("../bridges/clients/reference.js")} --host {host} --port {port} --timeout {timeout} ping`,
      ],
    },
  ];
  if (env.FONLINE_DIR)
    list.push({
      name: "client mode, the FOnline reference client",
      args: [
        "client",
        "--exec",
        `python3 ${join(env.FONLINE_DIR, "BuildTools/ai_control_client.py")} --host {host} --port {port} --timeout {timeout} ping`,
      ],
    });
  return list;
}

/** Busy processes, each bounded by its own clock so that none outlives a bench that died. */
function startBusy(count: number, mostMs: number): ChildProcess[] {
  const script = `const end = Date.now() + ${mostMs}; while (Date.now() < end) {}`;
  return Array.from({ length: count }, () => spawn(process.execPath, ["-e", script], { stdio: "ignore" }));
}

async function stopBusy(busy: ChildProcess[]): Promise<void> {
  await Promise.all(
    busy.map((child) => {
      if (child.exitCode !== null || child.signalCode !== null) return undefined;
      const gone = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      return gone;
    }),
  );
}

interface Outcome {
  ms: number;
  code: number | null;
  /** Every check's verdict, by id. */
  verdicts: Map<string, string>;
  /** The highest one-minute load average seen during the run. */
  load: number;
}

async function runTool(args: string[], seed: number, dir: string): Promise<Outcome> {
  const json = join(dir, `r-${seed}-${Date.now()}.json`);
  const started = Date.now();
  let load = loadavg()[0]!;
  const sampler = setInterval(() => (load = Math.max(load, loadavg()[0]!)), 1000);
  const child = spawn(
    process.execPath,
    [here("../bin.js"), ...args, "--profile", "standard", "--seed", String(seed), "--json", json],
    { cwd: root, stdio: "ignore", env: process.env },
  );
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  clearInterval(sampler);
  const ms = Date.now() - started;
  const verdicts = new Map<string, string>();
  try {
    const report = JSON.parse(readFileSync(json, "utf8")) as {
      rules: { checks: { id: string; verdict: string }[] }[];
    };
    for (const check of report.rules.flatMap((r) => r.checks)) verdicts.set(check.id, check.verdict);
  } catch {
    verdicts.set("(report)", "missing");
  }
  return { ms, code, verdicts, load };
}

/** Verdicts that make a claim about the target: one the load made, or took away, is a false verdict. */
const CLAIMS = new Set(["fail", "warn", "error", "missing", "none"]);

/**
 * Checks whose verdict differs between the quiet run and the loaded one, as `id quiet->loaded`: false ones (a claim
 * made or lost), and the rest (a pass that became a skip: a state the check could not reach on the loaded machine,
 * said with its reason, which claims nothing).
 */
function differences(quiet: Outcome, loaded: Outcome): { falses: string[]; unjudged: string[] } {
  const ids = new Set([...quiet.verdicts.keys(), ...loaded.verdicts.keys()]);
  const falses: string[] = [];
  const unjudged: string[] = [];
  for (const id of ids) {
    const [q, l] = [quiet.verdicts.get(id) ?? "none", loaded.verdicts.get(id) ?? "none"];
    if (q === l) continue;
    (CLAIMS.has(q) || CLAIMS.has(l) ? falses : unjudged).push(`${id} ${q}->${l}`);
  }
  return { falses, unjudged };
}

export interface LoadResult {
  figures: Figure[];
  /** The method, for the bench's record. */
  method: string;
  /** Every verdict the load changed, and every quiet verdict that was not a pass, said in words. */
  notes: string[];
}

/** Runs every target quiet and loaded, `seeds` times each, and returns the figures. */
export async function loadFigures(seeds = 2, log: (line: string) => void = console.log): Promise<LoadResult> {
  const busyCount = 2 * cpus().length;
  const dir = mkdtempSync(join(tmpdir(), "aicontrol-load-"));
  const figures: Figure[] = [];
  const notes: string[] = [];
  let busy: ChildProcess[] = [];
  const stop = () => {
    for (const child of busy) child.kill("SIGKILL");
  };
  process.once("exit", stop);
  try {
    for (const target of targets(process.env)) {
      const falses: number[] = [];
      const skipped: number[] = [];
      const slowdown: number[] = [];
      const loads: number[] = [];
      for (let seed = 1; seed <= seeds; seed++) {
        const quiet = await runTool(target.args, seed, dir);
        busy = startBusy(busyCount, 10 * 60_000);
        const loaded = await runTool(target.args, seed, dir).finally(() => stopBusy(busy));
        busy = [];
        const { falses: changed, unjudged } = differences(quiet, loaded);
        const failedQuietly = [...quiet.verdicts].filter(([, v]) => v === "fail" || v === "error");
        falses.push(changed.length);
        skipped.push(unjudged.length);
        slowdown.push(loaded.ms / quiet.ms);
        loads.push(loaded.load);
        if (changed.length) notes.push(`${target.name}, seed ${seed}: false: ${changed.join(", ")}`);
        if (unjudged.length) notes.push(`${target.name}, seed ${seed}: not judged under load: ${unjudged.join(", ")}`);
        if (failedQuietly.length)
          notes.push(`${target.name}, seed ${seed}, quiet: ${failedQuietly.map(([id, v]) => `${id} ${v}`).join(", ")}`);
        log(
          `   load: ${target.name}, seed ${seed}: quiet ${(quiet.ms / 1000).toFixed(1)} s (exit ${quiet.code}), ` +
            `loaded ${(loaded.ms / 1000).toFixed(1)} s (exit ${loaded.code}, load average up to ${loaded.load.toFixed(1)}), ` +
            `${changed.length} false verdicts, ${unjudged.length} passes not judged under load`,
        );
      }
      figures.push({
        figure: `5. under load, ${target.name}: false verdicts (a fail, warn or error the load made or took away)`,
        samples: falses,
        unit: "",
        digits: 0,
        target: "0",
        ok: (m) => m === 0 && falses.every((x) => x === 0),
      });
      figures.push({
        figure: `   under load, ${target.name}: passes the load left unjudged (skip, with the reason)`,
        samples: skipped,
        unit: "",
        digits: 0,
        target: "(information)",
      });
      figures.push({
        figure: `   under load, ${target.name}: wall time loaded / quiet`,
        samples: slowdown,
        unit: " x",
        digits: 2,
        target: `(information; load average up to ${Math.max(...loads).toFixed(1)})`,
      });
    }
  } finally {
    stop();
    process.removeListener("exit", stop);
    rmSync(dir, { recursive: true, force: true });
  }
  const method =
    `load mode: the standard profile against each target on a quiet machine, then with ${busyCount} busy processes ` +
    `(twice the cores) competing for the CPU, seeds 1..${seeds}; a check whose verdict differs between the two runs ` +
    "where either is a fail, warn or error counts as false; a pass that became a skip is counted apart";
  return { figures, method, notes };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf("--seeds");
  const seeds = at === -1 ? 2 : Number(process.argv[at + 1]);
  const { figures, method, notes } = await loadFigures(seeds);
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  };
  console.log(`\n- ${method}\n`);
  console.log("| figure | median | min | max | n | target | |\n| --- | ---: | ---: | ---: | ---: | --- | --- |");
  for (const f of figures) {
    const m = median(f.samples);
    const show = (x: number) => `${x.toFixed(f.digits)}${f.unit}`;
    const verdict = f.ok === undefined ? "" : f.ok(m) ? "met" : "MISSED";
    console.log(
      `| ${f.figure.trim()} | ${show(m)} | ${show(Math.min(...f.samples))} | ${show(Math.max(...f.samples))} | ${f.samples.length} | ${f.target} | ${verdict} |`,
    );
  }
  for (const note of notes) console.log(`- ${note}`);
}
