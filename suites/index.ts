// The catalogue: every check in every rule-group folder, found by walking them, so adding a
// rule's checks is adding one file (suites/<group>/<rule>.ts exporting `checks`).
import { readdirSync } from "node:fs";
import { extname } from "node:path";
import { contract } from "../protocol/contract.js";
import type { Check } from "./harness/check.js";

export type { Check };

/**
 * Cheap and foundational first; the destructive (floods, sessions that may kill a bridge) last. Where the tool
 * can start the bridge afresh, the run reorders them so a long history is filled once (historyFillsOnce in runner/run/plan.ts).
 */
const GROUP_ORDER = ["method", "wire", "error", "command", "integration", "validation"];

async function discover(): Promise<Check[]> {
  const root = new URL("./", import.meta.url);
  const ext = extname(new URL(import.meta.url).pathname); // .ts under vitest, .js when built
  const groups = readdirSync(root, { withFileTypes: true })
    // harness/ is the wire client; client/ holds the checks of client mode, with a catalogue of its own.
    .filter((d) => d.isDirectory() && d.name !== "harness" && d.name !== "client")
    .map((d) => d.name)
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const checks: Check[] = [];
  for (const group of groups) {
    // Within a group, in the contract's order of its rules.
    const order = (file: string) => {
      const at = contract.rules.findIndex((r) => r.id === `${group}.${file.slice(0, -ext.length)}`);
      return at === -1 ? contract.rules.length : at;
    };
    const files = readdirSync(new URL(`${group}/`, root))
      .filter((f) => f.endsWith(ext) && !f.endsWith(`.d${ext}`))
      .sort((a, b) => order(a) - order(b) || a.localeCompare(b));
    for (const file of files) {
      const module = (await import(new URL(`${group}/${file}`, root).href)) as { checks?: Check[] };
      if (!Array.isArray(module.checks)) throw new Error(`suites/${group}/${file} exports no "checks" list`);
      checks.push(...module.checks);
    }
  }
  return checks;
}

const rank = (group: string) => (GROUP_ORDER.includes(group) ? GROUP_ORDER.indexOf(group) : GROUP_ORDER.length);

/** Every check, in the order a run takes them. */
export const allChecks: readonly Check[] = await discover();
