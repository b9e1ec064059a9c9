// State coverage over a run: the cells (suites/harness/cells.ts) the checks' steps reached, and
// the steering of --duration: while cells are open, its rounds go to the checks that reach cells,
// aimed at the open ones; once none is left (or aiming stops adding any), rounds are random walks
// of every check again.
import type { StateCoverage } from "../reports/types.js";
import { CELLS } from "../suites/harness/cells.js";
import type { Check, Finding } from "../suites/harness/check.js";

/** Aimed rounds in a row that reach nothing new, after which the rest of the time goes to random walks. */
const FRUITLESS_ROUNDS = 3;

export class RunCoverage {
  private readonly reached = new Set<string>();
  private readonly unreachable = new Map<string, string>();
  /** Checks that report cells. */
  private readonly reporting = new Set<string>();
  private fixed?: ReadonlySet<string>;
  private fruitless = 0;

  add(check: Check, finding: Finding): string[] {
    if (!finding.cells) return [];
    this.reporting.add(check.id);
    const added = finding.cells.reached.filter((id) => !this.reached.has(id));
    for (const id of finding.cells.reached) this.reached.add(id);
    for (const [id, why] of Object.entries(finding.cells.unreachable ?? {})) this.unreachable.set(id, why);
    return added;
  }

  /** Cells neither reached nor out of reach. */
  open(): string[] {
    return CELLS.filter((c) => !this.reached.has(c.id) && !this.unreachable.has(c.id)).map((c) => c.id);
  }

  /** The end of the fixed pass: what --duration adds is counted from here. */
  endFixedPass(): void {
    this.fixed = new Set(this.reached);
  }

  /**
   * The next --duration round: the checks to run and the cells to aim them at. Aimed at the open cells with only
   * the checks that reach cells while that adds cells; otherwise every check, unaimed.
   */
  round(checks: readonly Check[]): { checks: readonly Check[]; unreached?: string[] } {
    const open = this.open();
    if (!open.length || this.fruitless >= FRUITLESS_ROUNDS || !this.reporting.size) return { checks };
    return { checks: checks.filter((c) => this.reporting.has(c.id)), unreached: open };
  }

  /** After an aimed round: whether it reached anything new. */
  roundAdded(added: number): void {
    this.fruitless = added ? 0 : this.fruitless + 1;
  }

  report(): StateCoverage | undefined {
    if (!this.reporting.size) return undefined;
    const added = this.fixed ? [...this.reached].filter((id) => !this.fixed!.has(id)) : undefined;
    return {
      reached: this.reached.size,
      total: CELLS.length,
      cells: CELLS.map((c) => ({
        id: c.id,
        reached: this.reached.has(c.id),
        ...(!this.reached.has(c.id) && this.unreachable.has(c.id) ? { unreachable: this.unreachable.get(c.id)! } : {}),
      })),
      ...(added ? { addedByDuration: CELLS.map((c) => c.id).filter((id) => added.includes(id)) } : {}),
    };
  }
}

/** The state coverage of several reports (shards, or runs) as one: a cell is reached where any of them reached it. */
export function mergeStateCoverage(list: readonly (StateCoverage | undefined)[]): StateCoverage | undefined {
  const all = list.filter((c): c is StateCoverage => c !== undefined);
  if (!all.length) return undefined;
  const ids = [...new Set(all.flatMap((c) => c.cells.map((cell) => cell.id)))];
  const cells = ids.map((id) => {
    const seen = all.flatMap((c) => c.cells.filter((cell) => cell.id === id));
    const reached = seen.some((cell) => cell.reached);
    const unreachable = reached ? undefined : seen.find((cell) => cell.unreachable)?.unreachable;
    return { id, reached, ...(unreachable ? { unreachable } : {}) };
  });
  const added = all.flatMap((c) => c.addedByDuration ?? []);
  return {
    reached: cells.filter((c) => c.reached).length,
    total: Math.max(...all.map((c) => c.total)),
    cells,
    ...(all.some((c) => c.addedByDuration) ? { addedByDuration: ids.filter((id) => added.includes(id)) } : {}),
  };
}
