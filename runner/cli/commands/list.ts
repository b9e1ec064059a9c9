// --list: the selected rules, how each is observed and which checks cover it.
import type { Contract, RuleId } from "../../../protocol/contract.js";
import { writeOutput } from "../../../reports/output.js";
import type { Check } from "../../../suites/harness/check.js";
import { UNCOVERED } from "../../aggregate.js";
import { listSelection } from "../../selection.js";
import { EXIT, type Io, type Outcome, type Values } from "../outcome.js";

/** Prints the rules `selected` picks (as JSON with --json), narrowed by --check. */
export function listCommand(values: Values, contract: Contract, selected: (id: RuleId) => boolean, io: Io): Outcome {
  const listed = listSelection(values.check, selected);
  if (values.json)
    writeOutput(values.json, `${JSON.stringify(listJson(contract, listed.checks, listed.rules), null, 2)}\n`, io.out);
  else io.out(listRules(contract, listed.checks, listed.rules));
  return { code: EXIT.pass };
}

function listJson(contract: Contract, checks: readonly Check[], selected: (id: RuleId) => boolean) {
  return contract.rules
    .filter((r) => selected(r.id))
    .map((rule) => ({
      id: rule.fullId,
      title: rule.title,
      level: rule.level,
      observed: rule.observed,
      ...(rule.reason ? { reason: rule.reason } : {}),
      checks: checks.filter((c) => c.rules.includes(rule.id)).map((c) => ({ id: c.id, description: c.description })),
    }));
}

function listRules(contract: Contract, checks: readonly Check[], selected: (id: RuleId) => boolean): string {
  const lines: string[] = [];
  for (const rule of contract.rules.filter((r) => selected(r.id))) {
    const covering = checks.filter((c) => c.rules.includes(rule.id)).map((c) => c.id);
    const how =
      rule.observed === "wire"
        ? covering.length
          ? covering.join(", ")
          : UNCOVERED
        : `${rule.observed}: ${rule.reason}`;
    lines.push(`${rule.fullId}  [${rule.level}, ${rule.observed}]\n    ${how}`);
  }
  return `${lines.join("\n")}\n`;
}
