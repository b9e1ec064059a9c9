import fc from "fast-check";
import { sessionStep } from "../../generators/sessionStep.js";
import { CELLS, Coverage, FAMILIES, type Family } from "../harness/cells.js";
import { type Check, type CheckContext, type Finding, pass, resultOf, rpc } from "../harness/check.js";
import { classesFirst } from "../harness/classes.js";
import { LoopAllowance } from "../harness/deep/pace.js";
import { Sequences } from "../harness/deep/sequences.js";
import { commandOf } from "../harness/deep/steps/index.js";
import { NO_TOKEN } from "../harness/expect.js";
import { advertisedTypes } from "../harness/lifecycle.js";
import { blamePlainForm } from "../harness/plain.js";

// Deep stateful fuzzing: sequences over one or two connections that reach the states where real
// bridges break (a full queue just freed, a history at its edge, auth after failures, dozens of
// reconnects, lines across read boundaries, races), each step judged by the shared oracles.
// A run reports the state cells it reached; later phases, and --duration, aim at the rest.

/** The rules only a bridge that requires a token lets this check judge. */
const AUTH_RULES: readonly string[] = ["method.auth", "error.unauthorized"];

const ONE_CONNECTION =
  "the bridge serves one connection at a time (the contract allows it), so no two connections act at once";

/** Steps in one generated sequence, at most. */
const MAX_STEPS = 24;
/** Phases after the first, each aimed at the families with cells not reached yet. */
const AIMED_PHASES = 3;

/**
 * What a phase draws: the families it aims at, and whether costly steps (a history of maxEvents, dozens of
 * connections) are drawn without being aimed at. The first phase leaves them out; a later phase draws them when it
 * aims at their family; a last phase after every cell was reached walks at random, them included.
 */
export interface Plan {
  aim: Family[];
  /** When costly steps are drawn (see sessionStep). */
  costly: "always" | "aimed" | "never";
  /** The seed sequences (suites/harness/deep-tour.ts) run first. */
  tour?: boolean;
}

/**
 * A phase's plan travels with its failures' replay path ("queue,auth+*~<fast-check's path>": "+" costly steps
 * always, "-" never, neither where aimed; "*" the seed sequences first):
 * it weights the steps drawn, so the same commands come back only under the same plan.
 */
const AIM_MARK = "~";
export function encodeAim(plan: Plan, replayPath = ""): string {
  const costly = { always: "+", aimed: "", never: "-" }[plan.costly];
  return `${plan.aim.join(",")}${costly}${plan.tour ? "*" : ""}${AIM_MARK}${replayPath}`;
}
export function decodeAim(replayPath: string | undefined): { plan: Plan; path: string } | undefined {
  if (replayPath === undefined) return undefined;
  const at = replayPath.indexOf(AIM_MARK);
  if (at === -1) return { plan: { aim: [], costly: "aimed" }, path: replayPath };
  const head = replayPath.slice(0, at);
  const aim = head
    .replace(/[+-]?\*?$/, "")
    .split(",")
    .filter((f): f is Family => (FAMILIES as readonly string[]).includes(f));
  const mark = /([+-]?)\*?$/.exec(head)?.[1];
  const plan: Plan = { aim, costly: mark === "+" ? "always" : mark === "-" ? "never" : "aimed" };
  if (head.endsWith("*")) plan.tour = true;
  return { plan, path: replayPath.slice(at + 1) };
}

const familiesOf = (ids: Iterable<string>): Family[] => {
  const wanted = new Set(ids);
  return FAMILIES.filter((f) => CELLS.some((c) => c.family === f && wanted.has(c.id)));
};

export const deepStates: Check = {
  id: "validation.protocol-smoke/deep-states",
  replayOnly:
    "a deep session drives one or two connections, races included, through many steps judged by a model of the " +
    "bridge's state, from a freshly started bridge",
  // Every rule a step judges: a failure names the one it broke besides the smoke rule.
  rules: [
    "validation.protocol-smoke",
    "method.auth",
    "method.ping",
    "method.status",
    "method.observe",
    "method.events",
    "method.act",
    "error.unauthorized",
    "error.queue-full",
    "integration.command-completion",
    "integration.bounded-state",
    "wire.sequential-connection",
    "wire.ndjson",
    "wire.response-envelope",
    "wire.utf8",
  ],
  needs: ["completions"],
  // Its first sequence fills the history to maxEvents: a history the checks before it filled is only topped up.
  inherits: "history",
  description:
    "Runs a seed sequence for each family of state cells, the first on the bridge as the checks before left it and " +
    "the others one after another from one freshly started bridge, then generated sequences, each from a freshly " +
    "started bridge where this tool owns it, over one connection (two where " +
    "the bridge serves them at once): acts with extreme fields and chains of appends, the queue filled to rejection " +
    "and freed, the history filled to exactly maxEvents and past it, cursors at the window's edges, runs of wrong " +
    "tokens, dozens of reconnects, half-closes and lines left unfinished at close, 64 connections ended each way in " +
    "turn, repeated ids of every JSON type and one id across methods and connections, multibyte characters across " +
    "4 to 64 KiB read boundaries, complete lines over 4 KiB to 1 MiB in one write, and racing acts, observes and status reads; each " +
    "reply judged against the contract and the model, and every accepted command followed to its completion.",
  note: "a session of any history behaves as the contract says; the state cells it reached are reported",
  async run(ctx) {
    // Measured before anything here waits on the game loop: what the check's time allows at the run's pace.
    const pace = LoopAllowance.of(ctx);
    const cov = new Coverage();
    const two = ctx.concurrentConnections === true;
    if (!two)
      cov.cannot(
        ["conn.two-interleaved", ...CELLS.filter((c) => c.family === "race").map((c) => c.id)],
        ONE_CONNECTION,
      );
    if (!ctx.tokenConfigured) cov.cannot("auth", NO_TOKEN);
    const conn = await ctx.session();
    const types = await advertisedTypes(ctx, conn);
    // A history of maxEvents at this bridge's pace: what one costly step costs.
    const maxEvents = resultOf(await ctx.call(conn, rpc("status", {}, "deep-limits")))?.maxEvents;
    const fullHistoryMs =
      Number.isSafeInteger(maxEvents) && pace.paceMs !== undefined ? pace.paceMs * (maxEvents as number) : 0;
    if (!types.length)
      cov.cannot(["command.every-advertised-type"], "the bridge advertises no command types (availableActions)");
    // A command that never completed is blamed on the session only where its plain form completes.
    const finding = await blamePlainForm(ctx, await explore(ctx, cov, types, two, fullHistoryMs, pace));
    // Without a token nothing of authorization was judged, and with every fill of the queue left out for want of
    // time, nothing of a full queue: a pass claims only the rest.
    const unjudged = [
      ...(ctx.tokenConfigured ? [] : AUTH_RULES),
      ...(pace.leftOut.has("fill-queue") && !cov.has("queue.after-rejection") ? ["error.queue-full"] : []),
    ];
    const judged = unjudged.length ? { rules: deepStates.rules.filter((r) => !unjudged.includes(r)) } : {};
    return { ...(finding.verdict === "pass" ? judged : {}), ...finding, cells: cov.toJSON() };
  },
};

async function explore(
  ctx: CheckContext,
  cov: Coverage,
  types: string[],
  two: boolean,
  fullHistoryMs: number,
  pace: LoopAllowance,
): Promise<Finding> {
  // The time the generated cases may take before the rest are let go (a slow game loop makes every case slow),
  // a second in the standard profile besides the seed sequences, so a shard holding this check still ends beside
  // the others: the first phase may take two parts of it, each aimed phase one more, and no aimed phase after the
  // first starts past it.
  const budget = Math.max(250, ctx.timeBudgetMs / 20);
  const started = Date.now();
  const replay = decodeAim(ctx.replayPath);
  const runs = new Sequences(ctx, cov, types, two, pace, replay !== undefined || ctx.unreached !== undefined);
  const run = ({ aim, costly, tour }: Plan, count: number) =>
    ctx.property(
      fc.commands([sessionStep({ types, aim, twoConnections: two, costly }).map(commandOf)], {
        maxCommands: MAX_STEPS,
        size: "medium",
        ...(replay?.path ? { replayPath: replay.path } : {}),
      }),
      runs.judge,
      { restartAfterFailure: true, ...(tour ? classesFirst(runs.seeds, count) : { runs: count }) },
    );
  const plans: Plan[] = [];
  // The costly steps cost about a second at default limits (a history of 512 events): generated cases draw them
  // where the profile gives this check that much, and where a history of maxEvents at this bridge's pace is not
  // many times that (at one command a 20 ms game tick, 512 events are ten seconds). The pace is measured one
  // completion at a time, slower than a fill that keeps the queue full: twice the budget is the bound.
  const full = budget >= 1000 && fullHistoryMs <= budget * 2;
  // --duration's aimed rounds spend their time on the cells left, the costly ones included, whatever the profile.
  const costlyAimed = full || ctx.unreached !== undefined;
  let plan: Plan = replay?.plan ?? {
    aim: ctx.unreached ? familiesOf(ctx.unreached) : [],
    costly: costlyAimed ? "aimed" : "never",
    tour: true,
  };
  for (let phase = 0; ; phase++) {
    plans.push(plan);
    // Each phase's share counts from its own start, so a phase that ran long does not starve the next.
    runs.budgetEnd = Date.now() + (budget * (phase === 0 ? 2 : 1)) / (AIMED_PHASES + 2);
    const finding = await run(plan, phase === 0 ? ctx.runs : Math.max(6, Math.ceil(ctx.runs / 4)));
    if (finding.verdict !== "pass") {
      const replayPath = finding.replayPath ?? (finding.counterexample ? "" : undefined);
      return replayPath === undefined ? finding : { ...finding, replayPath: encodeAim(plan, replayPath) };
    }
    // One aimed phase at least; more while the budget lasts.
    if (replay || phase >= AIMED_PHASES || plan.costly === "always") break;
    if (phase >= 1 && Date.now() >= started + budget) break;
    const aim = familiesOf(cov.open().map((c) => c.id));
    plan = aim.length
      ? { aim, costly: costlyAimed ? "aimed" : "never" }
      : { aim: [], costly: full ? "always" : "never" };
    if (!aim.length && !full) break;
  }
  const open = cov.open();
  return pass(
    `${runs.ran} sequences in ${plans.length} phase(s) matched the model${runs.beyond ? ` (${runs.beyond} more past the time budget not run)` : ""}; ` +
      `${cov.reached.size} of ${CELLS.length} state cells reached${open.length ? `, not: ${open.map((c) => c.id).join(", ")}` : ""}.` +
      (runs.cutShort ? ` ${runs.cutShort} more cut short by the check's deadline, not judged.` : "") +
      pace.note(),
  );
}

export const checks: Check[] = [deepStates];
