import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import type { Report } from "../reports/types.js";
import { runCli } from "../runner/cli.js";
import { TEST_TOKEN } from "./helpers.js";

// What a seeded run concludes stays what it was when the run's code is reshaped: verdicts, the messages of
// findings, their cases (seed, path, counterexample), exits and replay commands, on the built-in bridge, on three
// mutants and on the independently written Python bridge, compared with test/behaviour.golden.json (written by
// the code before; UPDATE_GOLDEN=1 writes it again). What varies from run to run is left out: times, ports, the
// counts inside a message (how many readings a pace allowed), the message of a pass, a skip over the time
// budget (paceAside) and the minimal sequence of a stateful case (statefulCaseAside).
const GOLDEN = new URL("./behaviour.golden.json", import.meta.url);
const hasPython = spawnSync("python3", ["--version"]).status === 0;
const QUICK = ["--profile", "quick", "--seed", "7"];

const mask = (text: string | undefined) =>
  text
    ?.replace(/(127\.0\.0\.1|localhost|\[::1\]):\d+/g, "$1:PORT")
    .replace(/port \d+/g, "port PORT")
    .replace(/^(npx aicontrol-conformance|npm start --)/, "CLI");

/** A report without what varies from run to run. */
function shape(report: Report) {
  return {
    summary: report.summary,
    ...(report.blocked ? { blocked: mask(report.blocked) } : {}),
    ...(report.stopped ? { stopped: { duty: report.stopped.duty, after: report.stopped.after } } : {}),
    ...(report.targetExits ? { exits: report.targetExits.map((e) => e.check).sort() } : {}),
    rules: report.rules.map((r) => ({
      id: r.id,
      verdict: r.verdict,
      ...(r.reason ? { reason: r.reason } : {}),
      checks: [...r.checks]
        .sort((a, b) => a.id.localeCompare(b.id))
        .map((c) => ({
          id: c.id,
          verdict: c.verdict,
          ...(c.verdict === "pass" ? {} : { message: mask(c.message)?.replace(/\d+/g, "N") }),
          ...(c.counterexample !== undefined ? { counterexample: c.counterexample } : {}),
          ...(c.seed !== undefined ? { seed: c.seed } : {}),
          ...(c.path !== undefined ? { path: c.path } : {}),
          ...(c.replayPath !== undefined ? { replayPath: c.replayPath } : {}),
          ...(c.replay !== undefined ? { replay: mask(c.replay) } : {}),
          ...(c.reproduced ? { reproduced: c.reproduced.grade } : {}),
        })),
    })),
  };
}

async function seeded(args: string[], builtIn = (o: object) => new ReferenceBridge(o)) {
  const io = { out: () => {}, err: () => {}, env: { FONLINE_AI_TOKEN: TEST_TOKEN } };
  const { code, report } = await runCli([...QUICK, ...args], io, { builtIn });
  return { code, ...shape(report!) };
}

const mutant = (name: string) => {
  const found = mutants.find((m) => m.name === name)!;
  return (o: object) => found.create(o);
};

const RUNS: [string, () => ReturnType<typeof seeded>][] = [
  ["the built-in bridge", () => seeded([])],
  // Breaks the framing the preflight reads: every check but the one that judges it is left unjudged.
  ["a mutant that pretty-prints its replies", () => seeded([], mutant("pretty-printed"))],
  // Fails many checks at once, in pools and alone, each rechecked.
  ["a mutant that sends events as text", () => seeded([], mutant("event-as-text"))],
  // Exits on a malformed line: a lost bridge, restarted, and the exit blamed on the check that caused it.
  ["a mutant that dies on malformed UTF-8", () => seeded([], mutant("dies-on-malformed-utf8"))],
  ...(hasPython
    ? [
        ["the Python bridge, spawned", () => seeded(["--spawn", "python3 bridges/python/bridge.py --port 0"])] as [
          string,
          () => ReturnType<typeof seeded>,
        ],
      ]
    : []),
];

type Shape = ReturnType<typeof shape> & { code: number };

/**
 * A check that passes at one pace may skip at another, over its profile's time budget (a machine busy with other
 * tests): both read as one outcome here, and so do the rule and the summary they make.
 */
function paceAside({ summary: _, ...run }: Shape) {
  const paced = (c: { verdict: string; message?: string }) =>
    c.verdict === "pass" || (c.verdict === "skip" && /budget/.test(c.message ?? ""));
  const PACED = "pass, or skipped over the time budget";
  return {
    ...run,
    rules: run.rules.map(({ reason, ...r }) => {
      const checks = r.checks.map(({ message, ...c }) =>
        paced({ ...c, message }) ? { ...c, verdict: PACED } : { ...statefulCaseAside(c), message, verdict: c.verdict },
      );
      const allPaced = checks.length > 0 && checks.every((c) => c.verdict === PACED);
      return ["pass", "skip"].includes(r.verdict) && allPaced
        ? { ...r, verdict: PACED, checks }
        : { ...r, ...(reason ? { reason } : {}), checks };
    }),
  };
}

/**
 * A stateful case (a sequence of commands, with its replayPath) shrinks against a game loop that runs beside it:
 * which shorter sequence still fails depends on when commands complete, so only its verdict and message are kept.
 */
function statefulCaseAside<C extends { replayPath?: string }>(check: C) {
  if (check.replayPath === undefined) return check;
  const { counterexample: _c, path: _p, replayPath: _r, replay: _x, ...rest } = check as C & Record<string, unknown>;
  return rest;
}

const golden: Record<string, Shape> = existsSync(GOLDEN) ? JSON.parse(readFileSync(GOLDEN, "utf8")) : {};

describe("a seeded run concludes what it concluded before", () => {
  it.each(RUNS)(
    "on %s",
    async (name, go) => {
      const now = await go();
      if (process.env.UPDATE_GOLDEN) {
        golden[name] = now;
        writeFileSync(GOLDEN, `${JSON.stringify(golden, null, 2)}\n`);
      } else expect(paceAside(now)).toEqual(paceAside(golden[name]!));
    },
    60_000,
  );
});

if (!hasPython) it.skip("the Python bridge: python3 is not installed, so it cannot be spawned", () => {});

describe("a report the run could not write", () => {
  it("is named by the reporter that failed, and the run exits 2", async () => {
    let err = "";
    const io = {
      out: () => {
        throw new Error("stdout is closed");
      },
      err: (t: string) => {
        err += t;
      },
      env: {},
    };
    const builtIn = (o: object) => new ReferenceBridge(o);
    const { code } = await runCli([...QUICK, "--rules", "method.ping", "--json", "-"], io, { builtIn });
    expect(err).toMatch(/the json report could not be written/);
    expect(code).toBe(2);
  });
});
