// The FOnline sample bridge as a user first meets the tool: standard and quick, spawned, and the sample's own smoke
// beside them. Run from `npm run bench` where FONLINE_DIR points at a copy of the FOnline repository, or alone:
//   FONLINE_DIR=/path/to/fonline node dist/bench/sample.js [--seeds N]
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** One run: wall seconds, CPU seconds of the tool and its bridges (user + system), bytes received, its exit code. */
export interface SampleRun {
  wallS: number;
  cpuS?: number;
  receivedMiB?: number;
  /** The report's rule verdicts, counted: "24 pass, 8 fail, 2 warn, 0 error". */
  verdicts?: string;
  code: number | null;
}

export interface SampleFigures {
  standard: SampleRun[];
  quick: SampleRun[];
  smoke: SampleRun[];
}

const SAMPLE = "Examples/AiControlSample";
const bin = fileURLToPath(new URL("../bin.js", import.meta.url));
/** GNU time, where the machine has it: the CPU time of a command and of every process it waited for. */
const GNU_TIME = "/usr/bin/time";

/** Where the sample is, or why it is not at hand. */
export function sampleDir(env: NodeJS.ProcessEnv = process.env): string | { missing: string } {
  const root = env.FONLINE_DIR;
  if (!root) return { missing: "FONLINE_DIR is not set" };
  const dir = join(root, SAMPLE);
  if (!existsSync(join(dir, "ai_control_sample.py")))
    return { missing: `no ${SAMPLE}/ai_control_sample.py under ${root}` };
  return dir;
}

/** A command timed: wall seconds, and user + system CPU seconds of it and its children where GNU time is there. */
function timed(cmd: string, args: string[], cwd?: string): { wallS: number; cpuS?: number; code: number | null } {
  const gnu = existsSync(GNU_TIME);
  const cpuFile = join(tmpdir(), `aicontrol-bench-cpu-${process.pid}`);
  const [file, argv] = gnu ? [GNU_TIME, ["-f", "%U %S", "-o", cpuFile, cmd, ...args]] : [cmd, args];
  const t0 = process.hrtime.bigint();
  const r = spawnSync(file, argv, { cwd, stdio: "ignore" });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  let cpuS: number | undefined;
  if (gnu && existsSync(cpuFile)) {
    // The last line: GNU time writes "Command exited with non-zero status N" before it where the command failed.
    const last = readFileSync(cpuFile, "utf8").trim().split("\n").at(-1) ?? "";
    const [user, system] = last.split(" ").map(Number);
    if (Number.isFinite(user) && Number.isFinite(system)) cpuS = user! + system!;
    rmSync(cpuFile, { force: true });
  }
  return { wallS, ...(cpuS !== undefined ? { cpuS } : {}), code: r.status };
}

/** Standard and quick against the spawned sample, `seeds` runs each (seeds 1..N, alternated), and its smoke as often. */
export function measureSample(dir: string, seeds = 3): SampleFigures {
  const figures: SampleFigures = { standard: [], quick: [], smoke: [] };
  const reports = mkdtempSync(join(tmpdir(), "aicontrol-bench-sample-"));
  const spawn = `python3 ${join(dir, "ai_control_sample.py")} --port 0`;
  const cli = (profile: "standard" | "quick", seed: number): SampleRun => {
    const json = join(reports, `${profile}-${seed}.json`);
    const args = [bin, "--spawn", spawn, "--profile", profile, "--seed", String(seed), "--json", json, "-q"];
    const run = timed(process.execPath, args);
    const report = existsSync(json)
      ? (JSON.parse(readFileSync(json, "utf8")) as {
          wire?: { bytesReceived: number };
          summary?: Record<"pass" | "fail" | "warn" | "error", number>;
        })
      : undefined;
    const { wire, summary: n } = report ?? {};
    return {
      ...run,
      ...(wire ? { receivedMiB: wire.bytesReceived / 1_048_576 } : {}),
      ...(n ? { verdicts: `${n.pass} pass, ${n.fail} fail, ${n.warn} warn, ${n.error} error` } : {}),
    };
  };
  for (let seed = 1; seed <= seeds; seed++) {
    figures.standard.push(cli("standard", seed));
    figures.quick.push(cli("quick", seed));
    figures.smoke.push(timed("python3", ["run_protocol_smoke.py"], dir));
    console.log(`   sample: seed ${seed} of ${seeds} done`);
  }
  rmSync(reports, { recursive: true, force: true });
  return figures;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/** One line per figure, every run listed: the machine is shared, so the spread says as much as the median. */
export function sampleLines(f: SampleFigures): string[] {
  const runs = (xs: SampleRun[], what: (r: SampleRun) => number | undefined, digits: number) =>
    xs.map((r) => what(r)?.toFixed(digits) ?? "?").join(", ");
  const row = (name: string, xs: SampleRun[], target: string) => {
    const walls = xs.map((r) => r.wallS);
    const cpus = xs.map((r) => r.cpuS).filter((c): c is number => c !== undefined);
    const received = xs.some((r) => r.receivedMiB !== undefined)
      ? `; received ${runs(xs, (r) => r.receivedMiB, 1)} MiB`
      : "";
    return (
      `${name}: wall median ${median(walls).toFixed(2)} s (${runs(xs, (r) => r.wallS, 2)} s), target ${target}; ` +
      `CPU (user+sys) ${cpus.length ? `median ${median(cpus).toFixed(2)} s (${runs(xs, (r) => r.cpuS, 2)} s)` : "not measured"}` +
      `${received}; exit ${xs.map((r) => r.code).join(", ")}` +
      (xs.some((r) => r.verdicts) ? `; verdicts ${xs.map((r) => r.verdicts ?? "?").join(" | ")}` : "")
    );
  };
  return [
    row("FOnline sample, standard, spawned", f.standard, "<= 15 s"),
    row("FOnline sample, quick, spawned", f.quick, "<= 5 s"),
    row("FOnline sample's own smoke (run_protocol_smoke.py)", f.smoke, "(information)"),
  ];
}

// Run alone: print the figures.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const dir = sampleDir();
  if (typeof dir !== "string") {
    console.log(`the FOnline sample is skipped: ${dir.missing}`);
  } else {
    const at = process.argv.indexOf("--seeds");
    const seeds = at === -1 ? 3 : Number(process.argv[at + 1]);
    for (const line of sampleLines(measureSample(dir, seeds))) console.log(line);
  }
}
