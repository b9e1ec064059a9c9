// --rules and --skip: globs over rule IDs, checked against the contract and made a selection.
import picomatch from "picomatch";
import type { Contract, RuleId } from "../../protocol/contract.js";
import { checkHint } from "../selection.js";
import { suggest } from "./options/suggest.js";
import { UsageError } from "./options/value.js";

/** Does a --rules/--skip glob match a rule (by short or full ID)? Globs are picomatch's: *, ?, {a,b}, [..]. */
export function globMatches(glob: string, rule: { id: string; fullId: string }): boolean {
  const test = picomatch(glob.replace(/^!/, ""), { dot: true });
  return test(rule.id) || test(rule.fullId);
}

export function validateGlobs(globs: string[], flag: string, contract: Contract): void {
  for (const glob of globs) {
    if (contract.rules.some((r) => globMatches(glob, r))) continue;
    throw new UsageError(
      `${flag} ${glob} matches no rule${suggest(
        glob,
        contract.rules.map((r) => r.id),
      )}${checkHint(glob)}; --list shows them all`,
    );
  }
}

/**
 * Selection predicate from --rules and --skip. A glob in --rules that starts with ! leaves
 * rules out, as --skip does; --rules made only of those selects every other rule.
 */
export function ruleSelector(rules: string[], skip: string[], contract: Contract): (id: RuleId) => boolean {
  const positive = rules.filter((g) => !g.startsWith("!"));
  const negative = [...skip, ...rules.filter((g) => g.startsWith("!"))];
  return (id) => {
    const rule = contract.rule(id);
    const wanted = positive.length === 0 || positive.some((g) => globMatches(g, rule));
    return wanted && !negative.some((g) => globMatches(g, rule));
  };
}
