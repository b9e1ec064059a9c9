import { appendFileSync } from "node:fs";
import { cleanMessage, decidingChecks, knownFailures, reproducibility, targetNotes, writeOutput } from "./output.js";
import { type Report, type Reporter, targetName } from "./types.js";

const ICON = { pass: "✅", fail: "❌", warn: "⚠️", skip: "⏭️", error: "🛑", known: "📌" } as const;
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
// Table cells are one line; `|` would end the cell, and `<`, `>`, `&` would let GitHub read a
// bridge's reply as HTML (a tag disappears, an entity turns into a character).
const cell = (text: string, max = Number.POSITIVE_INFINITY) =>
  clip(text, max)
    .replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!)
    .replace(/\|/g, "\\|")
    .replace(/\r?\n/g, " ");
// Inside a code span GitHub shows text literally (an entity would show as typed), so only the
// cell's `|` and the span's own backtick need care.
/** A cell of data (a bridge's reply may be a megabyte) shows its start; the JSON report holds it all. */
const DATA = 160;
const code = (text: string, max = DATA) => span(clip(text, max).replace(/\|/g, "\\|"));
const span = (text: string) => `\`${text.replace(/`/g, "ˋ").replace(/\r?\n/g, " ")}\``;

/** A compact summary for pull-request comments and CI job summaries. */
export function renderMarkdown(report: Report): string {
  // Failures the baseline accepts are counted apart, as known, with its reason.
  const known = knownFailures(report);
  const s = { ...report.summary };
  for (const id of known.keys()) s[report.rules.find((r) => r.id === id)!.verdict]--;
  const knownCount = known.size ? ` · ${ICON.known} ${known.size} known` : "";
  const lines = [
    `## AiControl conformance: ${s.fail ? `${ICON.fail} ${s.fail} failing` : s.error ? `${ICON.error} ${s.error} not judged` : `${ICON.pass} no failures`}${known.size ? ` (${known.size} known)` : ""}`,
    "",
    `${report.rules.length} rules · ${ICON.pass} ${s.pass} pass · ${ICON.fail} ${s.fail} fail${knownCount} · ${ICON.warn} ${s.warn} warn · ${ICON.error} ${s.error} error · ${ICON.skip} ${s.skip} skip · target ${span(targetName(report.target))} · seed ${report.seed} · ${(report.durationMs / 1000).toFixed(1)} s`,
    "",
  ];
  if (report.blocked) lines.push(`**No check could be judged:** ${cell(report.blocked)}`, "");
  for (const note of targetNotes(report)) lines.push(`**${cell(note)}**`, "");
  // One row per check: a check covering several rules is one finding, with its rules listed.
  const deciding = report.blocked ? [] : decidingChecks(report);
  // A rule no check could judge (no check for it in this version of the tool) has no row above.
  const unjudged = report.blocked ? [] : report.rules.filter((r) => r.verdict === "error" && !r.checks.length);
  if (deciding.length || unjudged.length) {
    lines.push("| | check | rules | message | expected | actual |", "| --- | --- | --- | --- | --- | --- |");
    for (const { check: c, rules } of deciding) {
      lines.push(
        `| ${rules.every((r) => known.has(r.id)) ? ICON.known : ICON[c.verdict]} | ${code(c.id)} | ${rules.map((r) => code(r.id)).join(" ")} | ${cell(cleanMessage(c.message) + (c.reproduced?.grade === "flaky" ? ` (${reproducibility(c)})` : ""))} | ${cell(c.expected ?? "", DATA)} | ${cell(c.actual ?? "", DATA)} |`,
      );
    }
    for (const rule of unjudged) {
      lines.push(`| ${ICON.error} | | ${code(rule.id)} | ${cell(rule.reason ?? "no verdict")} | | |`);
    }
    const replays = deciding.flatMap((d) => (d.check.replay ? [d.check.replay] : []));
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
    const reason = known.get(rule.id);
    const note =
      reason !== undefined
        ? `known failure (baseline): ${reason}`
        : (rule.reason ?? [...new Set(rule.checks.map((c) => c.id))].join(", "));
    const notes = (rule.notes ?? []).map((n) => `; note: ${n}`).join("");
    lines.push(
      `| ${reason !== undefined ? ICON.known : ICON[rule.verdict]} | \`${rule.id}\` | ${rule.level} | ${cell(note + notes)} |`,
    );
  }
  lines.push("", "</details>", "");
  return lines.join("\n");
}

/** Writes the file asked for, and the GitHub job summary when GITHUB_STEP_SUMMARY is set. */
export function markdownReporter(
  file: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  stdout?: (text: string) => void,
): Reporter {
  return {
    name: "markdown",
    onRunEnd(report) {
      const text = renderMarkdown(report);
      if (file) writeOutput(file, text, stdout);
      if (env.GITHUB_STEP_SUMMARY) appendFileSync(env.GITHUB_STEP_SUMMARY, text);
    },
  };
}
