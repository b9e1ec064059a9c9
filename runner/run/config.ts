// What the user asked of a run: read-only for the run's whole length. What the run finds out as
// it goes (stats, ledger, coverage, results, why it stopped) is its state (state.ts).
import type { Contract, RuleId } from "../../protocol/contract.js";
import type { Reporter } from "../../reports/types.js";
import type { Check, Finding } from "../../suites/harness/check.js";
import type { Case } from "../attempt.js";
import type { Baseline } from "../baseline.js";
import type { Target } from "../targets.js";

/** How a run uses the exact cases it is given (RunConfig.cases). */
export type CaseMode =
  /** A check with a case runs only that case (--replay, --check --seed --path). */
  | "replay"
  /** The saved case first; the check's own cases after it, when it passes (--save-failures). */
  | "corpus"
  /** The recorded case first, then the report's seed, then fresh cases: a rule passes only when all pass. */
  | "last-failed";

export interface RunConfig {
  readonly contract: Contract;
  readonly checks: readonly Check[];
  /** Undefined when the target could not be reached: every selected rule then reports `error`. */
  readonly target: Target | undefined;
  readonly targetInfo: { endpoint: string; spawned: boolean; label: string; command?: string };
  readonly unreachable?: string;
  readonly token?: string;
  readonly tokenEnv: string;
  readonly timeoutMs: number;
  readonly checkDeadlineMs: number;
  /** What a slow check may spend before skipping with the reason. */
  readonly timeBudgetMs: number;
  readonly runs: number;
  readonly seed: number;
  readonly profile: string;
  readonly strict: boolean;
  /** Rules selected by --rules/--skip; a check runs when any of its rules is selected. */
  readonly selected: (rule: RuleId) => boolean;
  /** Only these checks (by id), e.g. for a replay. */
  readonly onlyChecks?: ReadonlySet<string>;
  /** Exact cases (seed and fast-check path) per check: replayed alone, or (corpus) first. */
  readonly cases?: ReadonlyMap<string, Case>;
  /** How the cases are used: only them (a replay), or first (the corpus, --last-failed). */
  readonly caseMode?: CaseMode;
  /** With caseMode "last-failed": after the run's seed, the checks run once more with this one (fresh cases). */
  readonly freshSeed?: number;
  /** Known failures that do not fail the run (--baseline). */
  readonly baseline?: Baseline;
  readonly replayCommand?: (check: Check, finding: Finding) => string;
  /** Run only shard `index` (1-based) of `count`. */
  readonly shard?: { index: number; count: number };
  /** After the fixed pass, fuzz with fresh seeds until this much time has passed since the start. */
  readonly durationMs?: number;
  /** Stop after this many failing checks (--bail, --max-failures): the rest are skipped. */
  readonly maxFailures?: number;
  /** The flag that set maxFailures (--bail, --max-failures N), named when the run stops there. */
  readonly stopFlag?: string;
  /**
   * Checks that share no bridge state run this many at a time (1: one after another). A
   * failure found beside others is judged again alone.
   */
  readonly concurrency?: number;
  /**
   * More bridges like the target, started on demand (--lanes): the run deals its checks among up to `count` bridges
   * as the shards of one run, side by side (run/lanes.ts); where `paced`, only if the game loop is slow enough.
   */
  readonly lanes?: { readonly count: number; readonly paced: boolean; open(): Promise<Target> };
  /** Re-send a failing check's minimal case this many times to grade it (0: off). */
  readonly recheck?: number;
  /** Checks of these rules run before the others. */
  readonly first?: ReadonlySet<RuleId>;
  /** Interrupts the run (Ctrl-C): the checks left are skipped and the report is still written. */
  readonly signal?: AbortSignal;
  readonly reporters: readonly Reporter[];
  readonly log?: (line: string) => void;
}
