import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Mutant, mutants } from "../bridges/mutants/index.js";
import { type BridgeOptions, ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { checksReplayedOnly, checksWithoutOracle } from "../runner/cli/options/no-oracle.js";
import { exportReproducers } from "../runner/export.js";
import { allChecks } from "../suites/index.js";
import { runSuite, TEST_TOKEN } from "./helpers.js";

// Every mutant is caught by its check (test/mutants.test.ts); the reproducer that check exports must
// say so on its own, by the check's oracle: exit 1 against the mutant, 0 against the reference
// bridge, and never 3 ("judge it yourself") but for a check that says it has no oracle.

const hasPython = spawnSync("python3", ["--version"]).status === 0;
const root = mkdtempSync(join(tmpdir(), "aicc-export-mutants-"));
/** The limits the mutants are proven at (test/mutants.test.ts), so a replay meets the same bridge. */
const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };
/** Mutants whose checks run at a time, in this process. */
const POOL = 4;
const withoutOracle = new Set(checksWithoutOracle().map((c) => c.id));
const replayedOnly = new Set(checksReplayedOnly().map((c) => c.id));

/**
 * Runs a reproducer asynchronously: the bridge it talks to lives in this process, beside seven others and the
 * scripts' own load, so a reply may take over a second on a busy machine; two are given, as a reply late past
 * the timeout counts against the bridge.
 */
function python(file: string, port: number) {
  return new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      "python3",
      [file, "--port", String(port), "--timeout", "2"],
      { env: { PATH: process.env.PATH, FONLINE_AI_TOKEN: TEST_TOKEN }, timeout: 30_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? -1) : 0, out: stdout + stderr }),
    );
  });
}

/** Runs `file` against a fresh bridge, closed afterwards. */
async function against(bridge: ReferenceBridge, file: string) {
  const { port } = await bridge.listen();
  try {
    return await python(file, port);
  } finally {
    await bridge.close();
  }
}

/** A mutant's failing check run and exported: the scripts written, and what could not be. */
async function exported(mutant: Mutant) {
  // The limits the mutant needs, the reference bridge gets too: the same case, the same room.
  const options = { token: TEST_TOKEN, ...FAST, ...mutant.options };
  const report = await runSuite((token) => mutant.create({ ...options, token }), {
    checks: allChecks.filter((c) => c.id === mutant.check),
    // Room for a loaded machine: a reply late past the timeout would fail the check for a fault not the mutant's.
    timeoutMs: 1000,
  });
  const { written, refused } = exportReproducers(join(root, mutant.name), report, {
    contract,
    tokenEnv: "FONLINE_AI_TOKEN",
    tokenConfigured: true,
    timeoutMs: 500,
  });
  // A check that says its replay command reproduces it gets no script, and the refusal points at that command.
  const problems = refused
    .filter(({ check, reason }) => !(replayedOnly.has(check) && reason.includes("--replay-path")))
    .map(({ check, reason }) => `${mutant.name}: ${check} was not exported: ${reason}`);
  return { mutant, options, written, problems };
}

/** What is wrong with one exported script, run against its mutant and against the reference bridge. */
async function proven(mutant: Mutant, options: BridgeOptions, file: string): Promise<string[]> {
  const [broken, fixed] = await Promise.all([
    against(mutant.create(options), file),
    against(new ReferenceBridge(options), file),
  ]);
  const changed = (code: number) => code === 3 && withoutOracle.has(mutant.check);
  const problems: string[] = [];
  if (broken.code !== 1) problems.push(`${file} exits ${broken.code} on the mutant:\n${broken.out}`);
  if (fixed.code !== 0 && !changed(fixed.code))
    problems.push(`${file} exits ${fixed.code} on the reference bridge:\n${fixed.out}`);
  return problems.map((p) => `${mutant.name}: ${p}`);
}

/** Runs `work` over `items`, `POOL` at a time. */
async function pooled<T>(items: T[], work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: POOL }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

const failing = mutants.filter((m) => m.verdict === "fail");
let exports: Promise<Map<string, Awaited<ReturnType<typeof exported>>>> | undefined;
/**
 * Every failing mutant's check, run and exported once for all the tests below, before any script runs: a
 * script's segments then reach bridges whose process does nothing else, so a pause between them is not lost
 * to a busy event loop. Reproducers are written for failing checks only: a mutant that only warns has none.
 */
function exportedAll() {
  exports ??= (async () => {
    const runs = new Map<string, Awaited<ReturnType<typeof exported>>>();
    await pooled(failing, async (m) => void runs.set(m.name, await exported(m)));
    return runs;
  })();
  return exports;
}

// One test per mutant, several at a time: a script mostly waits (a reply that must not come, a completion that
// never does), and each mutant's proof is its own, with its own deadline.
describe.skipIf(!hasPython)(
  "each failing check's reproducer exits 1 on its mutant and 0 on the reference bridge",
  { concurrent: true },
  () => {
    it.for(failing)("$name", { timeout: 120_000 }, async (mutant) => {
      const run = (await exportedAll()).get(mutant.name);
      if (!run) throw new Error(`${mutant.name} was not exported`);
      const problems = [...run.problems];
      for (const file of run.written) problems.push(...(await proven(mutant, run.options, file)));
      expect(problems).toEqual([]);
    });
  },
);
