import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeDirectory } from "../reports/output.js";
import type { Report } from "../reports/types.js";

/** One saved failing case: enough to run exactly it again. */
export interface SavedCase {
  check: string;
  rule: string;
  seed?: number;
  path?: string;
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
      const record: SavedCase = {
        check: c.id,
        rule: rule.id,
        seed: c.seed,
        path: c.path,
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
