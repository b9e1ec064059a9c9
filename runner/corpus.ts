import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeDirectory } from "../reports/output.js";
import type { Report } from "../reports/types.js";
import type { Case } from "./attempt.js";
import { recordedCase } from "./replay.js";

/** One saved failing case, whole: enough to run exactly it again, on any later run. */
export interface SavedCase extends Case {
  check: string;
  rule: string;
  counterexample?: string;
  message: string;
  replay?: string;
}

const fileName = (checkId: string) => `${checkId.replace(/[^A-Za-z0-9._-]+/g, "__")}.json`;

/** Saves every failing case of a report, one file per case, in a folder per rule ID. */
export function saveFailures(dir: string, report: Report): number {
  let saved = 0;
  for (const rule of report.rules) {
    for (const c of rule.checks) {
      if (c.verdict !== "fail") continue;
      const folder = join(dir, rule.id);
      makeDirectory(folder);
      // A failure that was itself a replay of a saved case keeps that case.
      const { seed, path, replayPath, runs } = c.replayed?.verdict === "fail" ? c.replayed : recordedCase(report, c);
      const record: SavedCase = {
        check: c.id,
        rule: rule.id,
        seed,
        ...(path !== undefined ? { path } : {}),
        ...(replayPath ? { replayPath } : {}),
        ...(runs ? { runs } : {}),
        counterexample: c.counterexample,
        message: c.message,
        replay: c.replay,
      };
      writeFileSync(join(folder, fileName(c.id)), `${JSON.stringify(record, null, 2)}\n`);
      saved++;
    }
  }
  return saved;
}

/** The saved cases in a folder (none when it does not exist yet). */
export function loadCorpus(dir: string): SavedCase[] {
  let rules: string[];
  try {
    rules = readdirSync(dir);
  } catch {
    return [];
  }
  return rules.flatMap((rule) => {
    let files: string[];
    try {
      files = readdirSync(join(dir, rule)).filter((f) => f.endsWith(".json"));
    } catch {
      return [];
    }
    return files.map((f) => JSON.parse(readFileSync(join(dir, rule, f), "utf8")) as SavedCase);
  });
}

/** The exact case to run first for each check the corpus holds. */
export function corpusCases(saved: readonly SavedCase[]): Map<string, Case> {
  const cases = new Map<string, Case>();
  for (const c of saved) {
    if (typeof c.seed !== "number") continue;
    cases.set(c.check, {
      seed: c.seed,
      ...(c.path !== undefined ? { path: c.path } : {}),
      ...(c.replayPath ? { replayPath: c.replayPath } : {}),
      ...(c.runs ? { runs: c.runs } : {}),
    });
  }
  return cases;
}
