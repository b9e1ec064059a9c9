import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { type Mutant, mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { exportReproducers } from "../runner/export.js";
import { checksReplayedOnly, checksWithoutOracle } from "../runner/options.js";
import { allChecks } from "../suites/index.js";
import { runSuite, TEST_TOKEN } from "./helpers.js";

// Every mutant is caught by its check (test/mutants.test.ts); the reproducer that check exports must
// say so on its own, by the check's oracle: exit 1 against the mutant, 0 against the reference
// bridge, and never 3 ("judge it yourself") but for a check that says it has no oracle.

const hasPython = spawnSync("python3", ["--version"]).status === 0;
const root = mkdtempSync(join(tmpdir(), "aicc-export-mutants-"));
/** The limits the mutants are proven at (test/mutants.test.ts), so a replay meets the same bridge. */
const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };
/** Mutants at a time: each runs one check in this process, then two python3 processes. */
const POOL = 4;
const withoutOracle = new Set(checksWithoutOracle().map((c) => c.id));
const replayedOnly = new Set(checksReplayedOnly().map((c) => c.id));

/** Runs a reproducer asynchronously: the bridge it talks to lives in this process. */
function python(file: string, port: number) {
  return new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      "python3",
      [file, "--port", String(port), "--timeout", "1"],
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

/** What is wrong with the reproducers of the checks that failed on `mutant`, if anything. */
async function prove(mutant: Mutant): Promise<string[]> {
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
    .map(({ check, reason }) => `${check} was not exported: ${reason}`);
  for (const file of written) {
    const [broken, fixed] = await Promise.all([
      against(mutant.create(options), file),
      against(new ReferenceBridge(options), file),
    ]);
    const changed = (code: number) => code === 3 && withoutOracle.has(mutant.check);
    if (broken.code !== 1) problems.push(`${file} exits ${broken.code} on the mutant:\n${broken.out}`);
    if (fixed.code !== 0 && !changed(fixed.code))
      problems.push(`${file} exits ${fixed.code} on the reference bridge:\n${fixed.out}`);
  }
  return problems.map((p) => `${mutant.name}: ${p}`);
}

it.skipIf(!hasPython)(
  "every failing check's reproducer exits 1 on its mutant and 0 on the reference bridge",
  async () => {
    // Reproducers are written for failing checks only: a mutant that only warns has none to prove.
    const queue = mutants.filter((m) => m.verdict === "fail");
    const problems: string[] = [];
    await Promise.all(
      Array.from({ length: POOL }, async () => {
        for (let m = queue.shift(); m; m = queue.shift()) problems.push(...(await prove(m)));
      }),
    );
    expect(problems).toEqual([]);
  },
  120_000,
);
