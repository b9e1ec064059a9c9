import pc from "picocolors";
import type { CheckReport, Report, Reporter, RuleReport, Verdict } from "./types.js";

const PAINT: Record<Verdict, (s: string) => string> = {
  pass: pc.green,
  fail: pc.red,
  warn: pc.yellow,
  skip: pc.dim,
  error: pc.magenta,
};
const MARK: Record<Verdict, string> = { pass: "✓", fail: "✗", warn: "!", skip: "-", error: "?" };
const verdict = (v: Verdict) => PAINT[v](v.toUpperCase().padEnd(5));

export interface ConsoleOptions {
  write?: (text: string) => void;
  verbose?: boolean;
  /** A live progress line, rewritten in place (default: stdout is a TTY and not under CI). */
  live?: boolean;
}

/** Progress while checks run, then a per-rule table and the details of every failing rule. */
export function consoleReporter(options: ConsoleOptions = {}): Reporter {
  const out = options.write ?? ((text: string) => process.stdout.write(text));
  const live = options.live ?? (Boolean(process.stdout.isTTY) && !process.env.CI);
  const line = (text = "") => out(`${text}\n`);
  const clear = () => {
    if (live) out("\r\x1b[K");
  };
  let started = Date.now();
  let failures = 0;
  let current: { id: string; index: number; total: number } | undefined;
  let ticker: NodeJS.Timeout | undefined;
  const progress = () => {
    if (!current) return;
    clear();
    out(
      pc.dim(
        `  [${current.index + 1}/${current.total}] ${current.id} · ${failures} failing · ${((Date.now() - started) / 1000).toFixed(1)} s`,
      ),
    );
  };
  return {
    name: "console",
    onRunStart({ target, seed, checks, profile, strict }) {
      started = Date.now();
      line(pc.bold("aicontrol-conformance") + pc.dim(` · ${target.label}`));
      line(pc.dim(`${checks} checks · profile ${profile} · seed ${seed}${strict ? " · strict" : ""}`));
      line();
    },
    onCheckStart(check, index, total) {
      if (!live) return;
      current = { id: check.id, index, total };
      progress();
      // Keep the elapsed time moving through a long check.
      ticker ??= setInterval(progress, 1000).unref();
    },
    onCheckEnd(check, result) {
      if (result.verdict === "fail" || result.verdict === "error") failures++;
      current = undefined;
      clear();
      // Live: passing checks only move the progress line; the rest stay on screen.
      if (live && result.verdict === "pass") return;
      line(
        `  ${PAINT[result.verdict](MARK[result.verdict])} ${check.id} ${pc.dim(`${result.durationMs ?? 0} ms`)}${result.verdict === "pass" ? "" : pc.dim(` · ${firstLine(result.message)}`)}`,
      );
    },
    onRunEnd(report) {
      clearInterval(ticker);
      current = undefined;
      clear();
      line();
      printTable(report, line);
      if (report.blocked) {
        // One root cause, said once, instead of the same message under every rule.
        line();
        line(PAINT.error(pc.bold(`No check could be judged: ${report.blocked}`)));
      } else {
        const shown = report.rules.filter(
          (r) => r.verdict === "fail" || r.verdict === "error" || (options.verbose && r.verdict === "warn"),
        );
        for (const rule of shown) printDetails(rule, line);
      }
      line();
      line(summaryLine(report));
    },
  };
}

function printTable(report: Report, line: (t?: string) => void): void {
  let group = "";
  const width = Math.max(...report.rules.map((r) => r.id.length));
  for (const rule of report.rules) {
    if (rule.group !== group) {
      group = rule.group;
      line(pc.bold(group));
    }
    const note =
      rule.verdict === "skip"
        ? (rule.reason ?? rule.checks[0]?.message ?? "")
        : rule.checks
            .filter((c) => c.verdict === rule.verdict)
            .map((c) => c.id)
            .join(", ");
    line(`  ${verdict(rule.verdict)} ${rule.id.padEnd(width)}  ${pc.dim(truncate(note, 100))}`);
  }
}

function printDetails(rule: RuleReport, line: (t?: string) => void): void {
  line();
  line(`${PAINT[rule.verdict](pc.bold(`${rule.verdict.toUpperCase()} ${rule.id}`))} ${pc.dim(`(${rule.level})`)}`);
  line(`  ${pc.dim("rule:")} ${rule.requirement}`);
  for (const check of rule.checks.filter((c) => c.verdict === rule.verdict)) printCheck(check, line);
}

function printCheck(check: CheckReport, line: (t?: string) => void): void {
  line(`  ${pc.bold(check.id)}: ${check.message}`);
  if (check.requirement) line(`    ${pc.dim("requirement:")} ${check.requirement}`);
  if (check.expected !== undefined) line(`    ${pc.dim("expected:")}    ${check.expected}`);
  if (check.actual !== undefined) line(`    ${pc.dim("actual:")}      ${truncate(check.actual, 400)}`);
  if (check.counterexample !== undefined) line(`    ${pc.dim("minimal case:")} ${truncate(check.counterexample, 400)}`);
  if (check.replay !== undefined) line(`    ${pc.dim("replay:")}      ${check.replay}`);
}

export function summaryLine(report: Report): string {
  const s = report.summary;
  const parts = (["pass", "fail", "warn", "error", "skip"] as Verdict[]).map((v) => PAINT[v](`${s[v]} ${v}`));
  return `${report.rules.length} rules: ${parts.join(", ")} ${pc.dim(`(${(report.durationMs / 1000).toFixed(1)} s)`)}`;
}

const firstLine = (text: string) => truncate(text.split("\n")[0] ?? "", 120);
const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
