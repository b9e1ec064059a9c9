// GitHub Actions annotations: a failing rule becomes an error and a warning a warning on the
// workflow run's summary page, titled by the rule ID. GitHub reads these workflow commands
// from the job's standard output; outside GitHub Actions the reporter writes nothing.
import { cleanMessage, reproducibility } from "./output.js";
import type { Report, Reporter, RuleReport } from "./types.js";

/** A command's message: GitHub ends it at a line break, so `%`, CR and LF are percent-encoded. */
export const escapeData = (text: string) => text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");

/** A command's property (title=...): as a message, and `:` and `,` end a property. */
export const escapeProperty = (text: string) => escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");

const command = (kind: "error" | "warning", title: string, message: string) =>
  `::${kind} title=${escapeProperty(title)}::${escapeData(message)}\n`;

function annotation(rule: RuleReport): string {
  const checks = rule.checks.filter((c) => c.verdict === rule.verdict);
  if (!checks.length) return rule.reason ?? "no verdict";
  return checks
    .map((c) =>
      [
        `${c.id}: ${cleanMessage(c.message)}`,
        c.expected !== undefined ? `expected: ${c.expected}` : "",
        c.actual !== undefined ? `actual: ${c.actual}` : "",
        c.reproduced ? `rechecked: ${reproducibility(c)}` : "",
        c.replay !== undefined ? `replay: ${c.replay}` : "",
      ]
        .filter(Boolean)
        .join("\n"),
    )
    .join("\n\n");
}

/** Annotations for a finished run: `::error` per failing or unjudged rule, `::warning` per warning. */
export function renderGithub(report: Report): string {
  // One root cause, said once, instead of the same annotation on every rule.
  if (report.blocked) return command("error", "AiControl conformance", `No check could be judged: ${report.blocked}`);
  const of = (verdicts: string[]) => report.rules.filter((r) => verdicts.includes(r.verdict));
  return [
    ...of(["fail", "error"]).map((r) =>
      command("error", r.id, `${r.verdict === "error" ? "not judged: " : ""}${annotation(r)}`),
    ),
    ...of(["warn"]).map((r) => command("warning", r.id, annotation(r))),
  ].join("");
}

/** Writes the run's annotations through `write` when running under GitHub Actions (GITHUB_ACTIONS=true). */
export function githubReporter(
  write: (text: string) => void = (text) => process.stdout.write(text),
  env: NodeJS.ProcessEnv = process.env,
): Reporter {
  return {
    name: "github",
    onRunEnd(report) {
      if (env.GITHUB_ACTIONS !== "true") return;
      const text = renderGithub(report);
      if (text) write(text);
    },
  };
}
