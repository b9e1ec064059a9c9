import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import type { Mutant } from "../bridges/mutants/mutant.js";
import { contract } from "../protocol/contract.js";
import type { Check } from "../suites/harness/check.js";
import { allChecks } from "../suites/index.js";
import { runSuite } from "./helpers.js";

// One fault, one rule: a mutant's run at the quick profile fails the rule it names and the rules its fault really
// breaks (Mutant.alsoBreaks), and no other.
//
// A whole run per mutant costs seconds, so by default a mutant runs with the checks its fault can meet:
// - the checks of the rules it breaks (breaks, alsoBreaks, and the rules of its own check);
// - where it breaks a rule a plain form rests on (a command accepted, completed and read back in events, a plain bad
//   command rejected as invalid params: UNDER), every check that first asks whether a plain form works
//   (suites/harness/plain.ts: the command.* checks and PLAIN_FORM), which would blame such a fault on a field, a
//   code or a count;
// - the stateful session, which uses every method.
// The deep session, the costliest check, runs with the mutants it is the check of. And by default one mutant of each
// pair of a check and the rule it fails runs, the pair's mutants in turn from one UTC day to the next: every pair
// each run, every mutant within as many days as its pair has mutants (at most 8); BLAME_DAY=N runs day N's turn
// (days since 1970). BLAME_MUTANTS=all runs every mutant with every check (minutes); BLAME_MUTANTS=name,name runs
// those mutants with every check.

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

/** BLAME_MUTANTS: "all", or names separated by commas (default: one mutant a pair, with the checks its fault can meet). */
const named = process.env.BLAME_MUTANTS?.split(",");
/** One mutant of each pair of a check and its rule, the pair's mutants in turn by the UTC day. */
function inTurn(day: number): Mutant[] {
  const pairs = new Map<string, Mutant[]>();
  for (const m of mutants) pairs.set(`${m.check} ${m.breaks}`, [...(pairs.get(`${m.check} ${m.breaks}`) ?? []), m]);
  return [...pairs.values()].map((pair) => pair[day % pair.length]!);
}
const chosen = named
  ? named.includes("all")
    ? mutants
    : mutants.filter((m) => named.includes(m.name))
  : inTurn(Number(process.env.BLAME_DAY ?? Math.floor(Date.now() / 86_400_000)));
const checksOf = (m: Mutant): readonly Check[] => (named ? allChecks : meeting(m));

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
