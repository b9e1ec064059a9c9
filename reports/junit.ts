import { writeOutput } from "./output.js";
import { type Report, type Reporter, type RuleReport, targetName } from "./types.js";

const xml = (text: string) =>
  text
    .replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!)
    // XML 1.0 has no way to carry most control characters, even escaped.
    .replace(
      /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
    );

function details(rule: RuleReport): string {
  return rule.checks
    .filter((c) => c.verdict === rule.verdict)
    .map((c) =>
      [
        `${c.id}: ${c.message}`,
        c.expected !== undefined ? `  expected: ${c.expected}` : "",
        c.actual !== undefined ? `  actual: ${c.actual}` : "",
        c.counterexample !== undefined ? `  minimal case: ${c.counterexample}` : "",
        c.replay !== undefined ? `  replay: ${c.replay}` : "",
      ]
        .filter(Boolean)
        .join("\n"),
    )
    .join("\n\n");
}

/** JUnit XML: one testcase per rule, so CI dashboards track each rule ID over time. */
export function renderJunit(report: Report): string {
  const count = (v: string) => report.rules.filter((r) => r.verdict === v).length;
  const seconds = (report.durationMs / 1000).toFixed(3);
  const cases = report.rules.map((rule) => {
    const time = (rule.checks.reduce((t, c) => t + (c.durationMs ?? 0), 0) / 1000).toFixed(3);
    const head = `    <testcase name="${xml(rule.id)}" classname="${xml(rule.id.split(".").slice(0, -1).join("."))}" time="${time}">`;
    const first = rule.checks.find((c) => c.verdict === rule.verdict);
    switch (rule.verdict) {
      case "fail":
        return `${head}\n      <failure message="${xml(first?.message ?? "failed")}" type="${rule.level}">${xml(details(rule))}</failure>\n    </testcase>`;
      case "error":
        return `${head}\n      <error message="${xml(first?.message ?? "no verdict")}">${xml(details(rule))}</error>\n    </testcase>`;
      case "skip":
        return `${head}\n      <skipped message="${xml(rule.reason ?? first?.message ?? "skipped")}"/>\n    </testcase>`;
      case "warn":
        return `${head}\n      <system-out>${xml(`WARN ${details(rule)}`)}</system-out>\n    </testcase>`;
      default:
        return `${head}</testcase>`;
    }
  });
  const attrs = `tests="${report.rules.length}" failures="${count("fail")}" errors="${count("error")}" skipped="${count("skip")}" time="${seconds}"`;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="aicontrol-conformance" ${attrs}>`,
    `  <testsuite name="AiControl conformance" ${attrs} timestamp="${report.startedAt}">`,
    `    <properties><property name="seed" value="${report.seed}"/><property name="endpoint" value="${xml(targetName(report.target))}"/></properties>`,
    ...cases,
    `  </testsuite>`,
    `</testsuites>`,
    "",
  ].join("\n");
}

export function junitReporter(file: string): Reporter {
  return { name: "junit", onRunEnd: (report) => writeOutput(file, renderJunit(report)) };
}
