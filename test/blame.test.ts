import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import type { Mutant } from "../bridges/mutants/mutant.js";
import { contract } from "../protocol/contract.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

// One fault, one rule: a mutant's whole run at the quick profile fails the rule it names and the rules its fault
// really breaks (Mutant.alsoBreaks), and no other. A whole run per mutant costs seconds, so by default the mutants
// whose fault lies under what many checks build on (a command's acceptance and completion, the invalid-params
// code) run here, several at a time; BLAME_MUTANTS=all runs every mutant (minutes).

const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };
/** Runs at a time: a run mostly waits on the bridge's replies and game loop. */
const AT_ONCE = 4;

const UNDERNEATH = [
  "silent-unknown-types",
  "invalid-params-as-invalid-request",
  "command-seq-as-string",
  "act-without-type",
  "events-lenient-params",
  "move-loop-dies-on-string-x",
  "silent-on-ill-typed-x",
];

// The deep session judges its steps on validation.protocol-smoke besides the rule a step broke, whatever the
// fault: it is left out here until it names one rule per fault.
const CHECKS = allChecks.filter((c) => c.id !== "validation.protocol-smoke/deep-states");

/** BLAME_MUTANTS: "all", or names separated by commas (default: those above). */
const named = process.env.BLAME_MUTANTS?.split(",") ?? UNDERNEATH;
const chosen = named.includes("all") ? mutants : mutants.filter((m) => named.includes(m.name));

/** Runs `work` over `items`, `limit` at a time. */
function pooled<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R>[] {
  let free = limit;
  const waiting: (() => void)[] = [];
  return items.map(async (item) => {
    if (free > 0) free--;
    else await new Promise<void>((go) => waiting.push(go));
    try {
      return await work(item);
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  });
}

/** The failing checks of each rule a whole quick run against the mutant failed (short IDs), with their messages. */
const failedRules = pooled(chosen, AT_ONCE, async (m: Mutant) => {
  const report = await runSuite((token) => m.create({ token, ...FAST }), {
    checks: CHECKS,
    timeoutMs: 400,
    profile: "quick",
  });
  return report.rules
    .filter((r) => r.verdict === "fail")
    .map((r) => ({
      rule: r.id.slice(contract.prefix.length + 1),
      checks: r.checks.filter((c) => c.verdict === "fail").map((c) => `${c.id}: ${c.message}`),
    }));
});

describe.each(chosen.map((m, i) => [m.name, m, i] as const))("mutant %s", (_name, mutant, i) => {
  const also = mutant.alsoBreaks?.length ? ` and ${mutant.alsoBreaks.join(", ")}` : "";
  it(`fails ${mutant.breaks}${also} and no other rule`, async () => {
    const failed = await failedRules[i]!;
    if (mutant.verdict === "fail") expect(failed.map((f) => f.rule)).toContain(mutant.breaks);
    expect(failed.filter((f) => f.rule !== mutant.breaks && !mutant.alsoBreaks?.includes(f.rule))).toEqual([]);
  }, 300_000);
});
