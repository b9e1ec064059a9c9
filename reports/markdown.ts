import { appendFileSync } from "node:fs";
import { writeOutput } from "./output.js";
import { type Report, type Reporter, targetName } from "./types.js";

const ICON = { pass: "✅", fail: "❌", warn: "⚠️", skip: "⏭️", error: "🛑" } as const;
const cell = (text: string, max = 160) => {
  const clipped = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return clipped.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
};
const code = (text: string) => `\`${cell(text).replace(/`/g, "ˋ")}\``;

/** A compact summary for pull-request comments and CI job summaries. */
export function renderMarkdown(report: Report): string {
  const s = report.summary;
  const lines = [
    `## AiControl conformance: ${s.fail ? `${ICON.fail} ${s.fail} failing` : s.error ? `${ICON.error} ${s.error} not judged` : `${ICON.pass} no failures`}`,
    "",
    `${report.rules.length} rules · ${ICON.pass} ${s.pass} pass · ${ICON.fail} ${s.fail} fail · ${ICON.warn} ${s.warn} warn · ${ICON.error} ${s.error} error · ${ICON.skip} ${s.skip} skip · target \`${targetName(report.target)}\` · seed ${report.seed} · ${(report.durationMs / 1000).toFixed(1)} s`,
    "",
  ];
  const notable = report.rules.filter((r) => r.verdict === "fail" || r.verdict === "error" || r.verdict === "warn");
  if (notable.length) {
    lines.push("| | rule | check | expected | actual |", "| --- | --- | --- | --- | --- |");
    for (const rule of notable) {
      for (const c of rule.checks.filter((x) => x.verdict === rule.verdict)) {
        lines.push(
          `| ${ICON[rule.verdict]} | \`${rule.id}\` | ${code(c.id)} ${cell(c.message)} | ${cell(c.expected ?? "")} | ${cell(c.actual ?? "")} |`,
        );
      }
    }
    const replays = notable.flatMap((r) =>
      r.checks.filter((c) => c.replay && c.verdict === r.verdict).map((c) => c.replay!),
    );
    if (replays.length)
      lines.push(
        "",
        "<details><summary>Replay commands</summary>",
        "",
        "```sh",
        ...new Set(replays),
        "```",
        "",
        "</details>",
      );
    lines.push("");
  }
  lines.push("<details><summary>All rules</summary>", "", "| | rule | level | note |", "| --- | --- | --- | --- |");
  for (const rule of report.rules) {
    lines.push(
      `| ${ICON[rule.verdict]} | \`${rule.id}\` | ${rule.level} | ${cell(rule.reason ?? rule.checks.map((c) => c.id).join(", "), 120)} |`,
    );
  }
  lines.push("", "</details>", "");
  return lines.join("\n");
}

/** Writes the file asked for, and the GitHub job summary when GITHUB_STEP_SUMMARY is set. */
export function markdownReporter(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Reporter {
  return {
    name: "markdown",
    onRunEnd(report) {
      const text = renderMarkdown(report);
      if (file) writeOutput(file, text);
      if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, text);
    },
  };
}
