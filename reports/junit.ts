// JUnit XML as the Jenkins JUnit schema (xunit-plugin junit-10.xsd) allows it, which is also
// what GitHub test reporters read. One testcase per rule, named by the rule ID (classname: the
// contract's prefix and the rule group), so dashboards track each rule over time; no name
// carries a port or a seed, which change between runs.
//
// A warning (a SHOULD not met) does not fail the run, so its testcase passes; it stays visible
// as the testcase's <system-out> ("WARN <check>: ..."), which Jenkins and GitHub reporters
// show with the case, and as a suite <property name="warning"> per rule for tools that read
// properties. The testcase name stays the rule ID: a prefix would break its history.
import { cleanMessage, decidingChecks, knownFailures, reproducibility, targetNotes, writeOutput } from "./output.js";
import { type Report, type Reporter, type RuleReport, targetName } from "./types.js";

const xml = (text: string) =>
  text
    .replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!)
    // XML 1.0 has no way to carry most control characters, even escaped.
    .replace(
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );

function details(rule: RuleReport, alsoFails: Map<string, RuleReport[]>): string {
  return rule.checks
    .filter((c) => c.verdict === rule.verdict)
    .map((c) => {
      const others = (alsoFails.get(c.id) ?? []).filter((r) => r !== rule).map((r) => r.id);
      return [
        `${c.id}: ${cleanMessage(c.message)}`,
        others.length ? `  also ${rule.verdict === "warn" ? "warns on" : "fails"}: ${others.join(", ")}` : "",
        c.expected !== undefined ? `  expected: ${c.expected}` : "",
        c.actual !== undefined ? `  actual: ${c.actual}` : "",
        c.counterexample !== undefined ? `  minimal case: ${c.counterexample}` : "",
        c.reproduced ? `  rechecked: ${reproducibility(c)}` : "",
        c.replay !== undefined ? `  replay: ${c.replay}` : "",
      ]
        .filter(Boolean)
        .join("\n");
    })
    .join("\n\n");
}

/**
 * Seconds per rule that add up to no more than the run took: a check covering several rules
 * ran once, so each of its rules gets an equal share of its time (rounded down to the
 * millisecond); shards merged into one report ran in parallel, so their total is scaled down
 * to the wall time.
 */
function ruleTimes(report: Report): Map<RuleReport, number> {
  const covers = new Map<string, number>();
  for (const rule of report.rules) for (const c of rule.checks) covers.set(c.id, (covers.get(c.id) ?? 0) + 1);
  const raw = new Map(
    report.rules.map((rule) => [
      rule,
      rule.checks.reduce((t, c) => t + (c.durationMs ?? 0) / (covers.get(c.id) ?? 1), 0),
    ]),
  );
  const total = [...raw.values()].reduce((a, b) => a + b, 0);
  const scale = total > report.durationMs ? report.durationMs / total : 1;
  return new Map([...raw].map(([rule, ms]) => [rule, Math.floor(ms * scale) / 1000]));
}

/** JUnit XML: one testcase per rule, so CI dashboards track each rule ID over time. */
export function renderJunit(report: Report): string {
  // A failure the baseline accepts is a skipped case with its reason: a dashboard shows what is new.
  const known = knownFailures(report);
  const count = (v: string) => report.rules.filter((r) => (known.has(r.id) ? "skip" : r.verdict) === v).length;
  const seconds = (report.durationMs / 1000).toFixed(3);
  const times = ruleTimes(report);
  const alsoFails = new Map(decidingChecks(report).map((d) => [d.check.id, d.rules]));
  const cases = report.rules.map((rule) => {
    const classname = rule.id.split(".").slice(0, -1).join(".") || rule.group;
    const head = `    <testcase name="${xml(rule.id)}" classname="${xml(classname)}" time="${times.get(rule)!.toFixed(3)}">`;
    const first = rule.checks.find((c) => c.verdict === rule.verdict);
    const message = first ? cleanMessage(first.message).split("\n")[0]! : undefined;
    const reason = known.get(rule.id);
    if (reason !== undefined)
      return `${head}\n      <skipped message="${xml(`known failure (baseline): ${reason}`)}"/>\n    </testcase>`;
    switch (rule.verdict) {
      case "fail":
        return `${head}\n      <failure message="${xml(`${first?.id}: ${message}`)}" type="${rule.level}">${xml(details(rule, alsoFails))}</failure>\n    </testcase>`;
      case "error":
        return `${head}\n      <error message="${xml(message ?? rule.reason ?? "no verdict")}" type="inconclusive">${xml(details(rule, alsoFails) || (rule.reason ?? ""))}</error>\n    </testcase>`;
      case "skip":
        return `${head}\n      <skipped message="${xml(rule.reason ?? message ?? "skipped")}"/>\n    </testcase>`;
      case "warn":
        return `${head}\n      <system-out>${xml(`WARN ${details(rule, alsoFails)}`)}</system-out>\n    </testcase>`;
      default:
        return `${head}</testcase>`;
    }
  });
  const warnings = report.rules
    .filter((r) => r.verdict === "warn")
    .map((r) => {
      const c = r.checks.find((x) => x.verdict === "warn");
      const text = `${r.id}: ${c ? `${c.id}: ${cleanMessage(c.message).split("\n")[0]}` : "warning"}`;
      return `<property name="warning" value="${xml(text)}"/>`;
    });
  const properties = [
    `<property name="seed" value="${report.seed}"/>`,
    `<property name="endpoint" value="${xml(targetName(report.target))}"/>`,
    ...(report.contract
      ? [`<property name="contract" value="${report.contract.version} sha256:${xml(report.contract.sha256)}"/>`]
      : []),
    ...warnings,
  ];
  const notes = targetNotes(report);
  const totals = `tests="${report.rules.length}" failures="${count("fail")}" errors="${count("error")}"`;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="aicontrol-conformance" ${totals} time="${seconds}">`,
    `  <testsuite name="AiControl conformance" ${totals} skipped="${count("skip")}" time="${seconds}" timestamp="${report.startedAt}">`,
    `    <properties>${properties.join("")}</properties>`,
    ...cases,
    ...(report.blocked || notes.length
      ? [
          `    <system-err>${xml([...(report.blocked ? [`No check could be judged: ${report.blocked}`] : []), ...notes].join("\n"))}</system-err>`,
        ]
      : []),
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}

export function junitReporter(file: string, stdout?: (text: string) => void): Reporter {
  return { name: "junit", onRunEnd: (report) => writeOutput(file, renderJunit(report), stdout) };
}
