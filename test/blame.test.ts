import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import type { Mutant } from "../bridges/mutants/mutant.js";
import { contract } from "../protocol/contract.js";
import type { Check } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

// One fault, one rule: a mutant's run at the quick profile fails exactly the rule it names, the rules its fault
// really breaks (Mutant.alsoBreaks), and the rules KNOWN_MISBLAMES still lists for it: an open defect of attribution,
// where a check blames its own rule for a fault another rule owns. A fix and a regression both turn a test red until
// the ledger says so.
//
// Every mutant runs, each with the checks its fault can meet (a whole run per mutant costs seconds):
// - the checks of the rules it breaks (breaks, alsoBreaks, and the rules of its own check);
// - where it breaks a rule a plain form rests on (a command accepted, completed and read back in events, a plain bad
//   command rejected as invalid params: UNDER), every check that first asks whether a plain form works
//   (suites/harness/plain.ts: the command.* checks and PLAIN_FORM), which would blame such a fault on a field, a
//   code or a count;
// - the stateful session, which uses every method.
// The deep session, the costliest check, runs with the mutants it is the check of. BLAME_MUTANTS=name,name runs those
// mutants alone; BLAME_CHECKS=all runs every check against each (minutes for all mutants; the ledger covers the
// default checks).

/**
 * Open defects: mutant -> the rules it fails beyond its own, each with why. Keep it small; a fix removes its entry.
 */
const KNOWN_MISBLAMES: Record<string, Record<string, string>> = {};

const FAST = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };
/** Runs at a time: a run mostly waits on the bridge's replies and game loop. */
const AT_ONCE = 4;

const DEEP = "validation.protocol-smoke/deep-states";
/** The checks besides the command.* checks that ask a plain form before they blame a code or a count on it. */
const PLAIN_FORM = new Set([
  "error.queue-full/flood",
  "error.unauthorized/before-auth",
  "integration.bounded-state/history-exact",
  "method.status/queued-commands",
  "method.auth/near-miss",
]);

/** The rules a plain form rests on. */
const UNDER = new Set(["method.act", "integration.command-completion", "method.events", "error.invalid-params"]);

/** The checks a mutant's fault can meet (see above). */
function meeting(m: Mutant): readonly Check[] {
  const own = allChecks.find((c) => c.id === m.check);
  const rules = new Set<string>([m.breaks, ...(m.alsoBreaks ?? []), ...(own?.rules ?? [])]);
  const under = [...rules].some((r) => UNDER.has(r));
  const builds = (c: Check) =>
    c.id === "validation.protocol-smoke/stateful" || (under && (c.id.startsWith("command.") || PLAIN_FORM.has(c.id)));
  return allChecks.filter(
    (c) => c.id === m.check || (c.id !== DEEP && (builds(c) || c.rules.some((r) => rules.has(r)))),
  );
}

/** BLAME_MUTANTS: names separated by commas (default: every mutant). */
const named = process.env.BLAME_MUTANTS?.split(",");
const chosen = named ? mutants.filter((m) => named.includes(m.name)) : mutants;
const checksOf = (m: Mutant): readonly Check[] => (process.env.BLAME_CHECKS === "all" ? allChecks : meeting(m));

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

/** The failing checks of each rule a quick run against the mutant failed (short IDs), with their messages. */
const failedRules = pooled(chosen, AT_ONCE, async (m: Mutant) => {
  const report = await runSuite((token) => m.create({ token, ...FAST }), {
    checks: checksOf(m),
    timeoutMs: 400,
    profile: "quick",
    // One check at a time: a fault that carries state across connections (a reply cached by id) would otherwise
    // meet whichever check's connection the machine's timing put next, and the rules it fails would vary by load.
    concurrency: 1,
  });
  return report.rules
    .filter((r) => r.verdict === "fail")
    .map((r) => ({
      rule: r.id.slice(contract.prefix.length + 1),
      checks: r.checks.filter((c) => c.verdict === "fail").map((c) => `${c.id}: ${c.message}`),
    }));
});

describe.each(chosen.map((m, i) => [m.name, m, i] as const))("mutant %s", (name, mutant, i) => {
  // A SHOULD's mutant warns on its rule and fails none.
  const own = mutant.verdict === "fail" ? [mutant.breaks] : [];
  const want = [...own, ...(mutant.alsoBreaks ?? []), ...Object.keys(KNOWN_MISBLAMES[name] ?? {})];
  it(`fails exactly ${want.join(", ") || "no rule"}`, async () => {
    const failed = await failedRules[i]!;
    const got = failed.map((f) => f.rule);
    expect(
      failed.filter((f) => !want.includes(f.rule)),
      "rules failed beyond the mutant's own and its ledger entry",
    ).toEqual([]);
    expect(
      want.filter((r) => !got.includes(r)),
      "rules the mutant or its ledger entry names that the run did not fail",
    ).toEqual([]);
  }, 300_000);
});
