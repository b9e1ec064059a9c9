import pc from "picocolors";
import { cleanMessage, decidingChecks, reproducibility, targetNotes } from "./output.js";
import { stateCoverageLine } from "./state-coverage.js";
import type { CheckReport, Report, Reporter, RuleReport, Verdict } from "./types.js";

type Colors = ReturnType<typeof pc.createColors>;
type Paint = Record<Verdict, (s: string) => string>;

const MARK: Record<Verdict, string> = { pass: "✓", fail: "✗", warn: "!", skip: "-", error: "?" };
const paintOf = (c: Colors): Paint => ({ pass: c.green, fail: c.red, warn: c.yellow, skip: c.dim, error: c.magenta });

// Rules the user left out of this run (--rules / --skip, a replay, another shard): listing
// them row by row buries the rules that ran, so they are counted unless --verbose.
const NOT_CHOSEN = /^(not selected|not part of this replay|checked in another shard)/;

export interface ConsoleOptions {
  write?: (text: string) => void;
  verbose?: boolean;
  /** Only the failures and the summary: no progress, no per-rule table. */
  quiet?: boolean;
  /** A live progress line, rewritten in place (default: stdout is a TTY and not under CI); never without a TTY. */
  live?: boolean;
  /** Whether the output is a terminal (default: stdout's). Without one, output is plain text. */
  tty?: boolean;
  /** The terminal's width (default: stdout's, else 80); the live line never wraps past it. */
  columns?: number;
  /** Where NO_COLOR / FORCE_COLOR are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

/** Colour only on a terminal, never with NO_COLOR (https://no-color.org), always with FORCE_COLOR. */
export function colorsFor(tty: boolean, env: NodeJS.ProcessEnv = process.env): Colors {
  if (env.NO_COLOR) return pc.createColors(false);
  if (env.FORCE_COLOR && env.FORCE_COLOR !== "0") return pc.createColors(true);
  return pc.createColors(tty && env.TERM !== "dumb");
}

/** Progress while checks run, then a per-rule table, each failing check once, and the failed rules. */
export function consoleReporter(options: ConsoleOptions = {}): Reporter {
  const out = options.write ?? ((text: string) => process.stdout.write(text));
  const tty = options.tty ?? Boolean(process.stdout.isTTY);
  // Rewriting a line in place needs a terminal: in a pipe or a log file it would leave
  // carriage returns and escape sequences behind.
  const live = tty && (options.live ?? !process.env.CI);
  const c = colorsFor(tty, options.env);
  const paint = paintOf(c);
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
    const width = options.columns ?? process.stdout.columns ?? 80;
    const text = `  [${current.index + 1}/${current.total}] ${current.id} · ${failures} failing · ${((Date.now() - started) / 1000).toFixed(1)} s`;
    // One column short of the width: a line that fills it wraps on some terminals, and
    // the next carriage return would then rewrite only its second half.
    out(c.dim(truncate(text, Math.max(10, width - 1))));
  };
  return {
    name: "console",
    onRunStart({ target, seed, checks, profile, strict }) {
      started = Date.now();
      if (options.quiet) return;
      line(c.bold("aicontrol-conformance") + c.dim(` · ${target.label}`));
      line(c.dim(`${checks} checks · profile ${profile} · seed ${seed}${strict ? " · strict" : ""}`));
      line();
    },
    onCheckStart(check, index, total) {
      if (!live || options.quiet) return;
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
      if ((live && result.verdict === "pass") || options.quiet) return;
      const note = result.verdict === "pass" ? "" : c.dim(` · ${firstLine(cleanMessage(result.message))}`);
      line(
        `  ${paint[result.verdict](MARK[result.verdict])} ${check.id} ${c.dim(`${result.durationMs ?? 0} ms`)}${note}`,
      );
    },
    onRunEnd(report) {
      clearInterval(ticker);
      ticker = undefined;
      current = undefined;
      clear();
      if (!options.quiet) {
        line();
        printTable(report, line, c, options.verbose ?? false);
      }
      // The root cause first: every "inconclusive" below follows from it.
      for (const note of targetNotes(report)) {
        line();
        line(paint.error(c.bold(printable(note))));
      }
      if (report.blocked) {
        // One root cause, said once, instead of the same message under every rule.
        line();
        line(paint.error(c.bold(`No check could be judged: ${printable(report.blocked)}`)));
      } else {
        printDetails(report, line, c, options.verbose ?? false);
      }
      line();
      line(summaryLine(report, c));
      if (report.wire && !options.quiet) line(c.dim(timeLine(report)));
      if (stateCoverageLine(report) && !options.quiet) line(c.dim(stateCoverageLine(report)!));
      if (!report.blocked) printFailedRules(report, line, c);
    },
  };
}

function printTable(report: Report, line: (t?: string) => void, c: Colors, verbose: boolean): void {
  const paint = paintOf(c);
  const hidden = verbose ? [] : report.rules.filter(notChosen);
  const rows = report.rules.filter((r) => !hidden.includes(r));
  let group = "";
  const width = Math.max(0, ...rows.map((r) => r.id.length));
  for (const rule of rows) {
    if (rule.group !== group) {
      group = rule.group;
      line(c.bold(group));
    }
    const note =
      rule.verdict === "skip"
        ? (rule.reason ?? rule.checks[0]?.message ?? "")
        : rule.checks
            .filter((x) => x.verdict === rule.verdict)
            .map((x) => x.id)
            .join(", ");
    line(
      `  ${paint[rule.verdict](rule.verdict.toUpperCase().padEnd(5))} ${rule.id.padEnd(width)}  ${c.dim(truncate(printable(note), 100))}`,
    );
  }
  if (hidden.length) line(c.dim(`  ${hidden.length} rule(s) not selected for this run (--verbose lists them)`));
}

const notChosen = (rule: RuleReport) => rule.verdict === "skip" && NOT_CHOSEN.test(rule.reason ?? "");

/**
 * Under each failing rule, its failing checks; a check that covers several rules is printed
 * in full once, under the first of them, and later rules point back to it.
 */
function printDetails(report: Report, line: (t?: string) => void, c: Colors, verbose: boolean): void {
  const paint = paintOf(c);
  const shown: Verdict[] = verbose ? ["fail", "error", "warn"] : ["fail", "error"];
  const deciding = new Map(decidingChecks(report, shown).map((d) => [d.check.id, d]));
  for (const rule of report.rules.filter((r) => shown.includes(r.verdict))) {
    line();
    line(`${paint[rule.verdict](c.bold(`${rule.verdict.toUpperCase()} ${rule.id}`))} ${c.dim(`(${rule.level})`)}`);
    line(`  ${c.dim("rule:")} ${rule.requirement}`);
    if (rule.reason && !rule.checks.length) line(`  ${c.dim("why:")}  ${printable(rule.reason)}`);
    for (const check of rule.checks.filter((x) => x.verdict === rule.verdict)) {
      const entry = deciding.get(check.id);
      const first = entry?.rules[0];
      if (entry && first && first !== rule) {
        line(`  ${c.bold(check.id)}: ${c.dim(`shown above under ${first.id}`)}`);
        continue;
      }
      printCheck(check, rule, entry?.rules ?? [rule], line, c);
    }
  }
}

function printCheck(
  check: CheckReport,
  rule: RuleReport,
  rules: RuleReport[],
  line: (t?: string) => void,
  c: Colors,
): void {
  const label = (name: string) => c.dim(`${name}:`.padEnd(14));
  const message = printable(cleanMessage(check.message)).split("\n");
  line(`  ${c.bold(check.id)}: ${message[0] ?? ""}`);
  for (const more of message.slice(1)) line(`    ${more}`);
  if (rules.length > 1)
    line(
      `    ${label("also fails")}${rules
        .filter((r) => r !== rule)
        .map((r) => r.id)
        .join(", ")}`,
    );
  if (check.requirement && check.requirement !== rule.requirement)
    line(`    ${label("requirement")}${check.requirement}`);
  if (check.expected !== undefined) line(`    ${label("expected")}${printable(check.expected)}`);
  if (check.actual !== undefined) line(`    ${label("actual")}${truncate(printable(check.actual), 400)}`);
  if (check.counterexample !== undefined)
    line(`    ${label("minimal case")}${truncate(printable(check.counterexample), 400)}`);
  const again = reproducibility(check);
  if (again) line(`    ${label("rechecked")}${check.reproduced?.grade === "flaky" ? c.bold(again) : again}`);
  if (check.replay !== undefined) line(`    ${label("replay")}${check.replay}`);
}

/** The last lines: what to fix, by rule ID, so a long run's verdict is not scrolled away. */
function printFailedRules(report: Report, line: (t?: string) => void, c: Colors): void {
  const paint = paintOf(c);
  const failed = report.rules.filter((r) => r.verdict === "fail" || r.verdict === "error");
  if (!failed.length) return;
  line();
  line(c.bold(`Failed rules (${failed.length}):`));
  for (const rule of failed) line(`  ${paint[rule.verdict](rule.verdict.toUpperCase().padEnd(5))} ${rule.id}`);
}

export function summaryLine(report: Report, c: Colors = colorsFor(Boolean(process.stdout.isTTY))): string {
  const paint = paintOf(c);
  const s = report.summary;
  const parts = (["pass", "fail", "warn", "error", "skip"] as Verdict[]).map((v) => paint[v](`${s[v]} ${v}`));
  return `${report.rules.length} rules: ${parts.join(", ")} ${c.dim(`(${(report.durationMs / 1000).toFixed(1)} s)`)}`;
}

/** Where the time went: the run's wall time, what crossed the wire, and how long it waited for the bridge. */
export function timeLine(report: Report): string {
  const w = report.wire!;
  const size = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`);
  return (
    `time: ${(report.durationMs / 1000).toFixed(1)} s, of it ${(w.waitingMs / 1000).toFixed(1)} s waiting on the bridge; ` +
    `${w.lines.toLocaleString("en")} line${w.lines === 1 ? "" : "s"} sent (${size(w.bytesSent)}), ${size(w.bytesReceived)} received`
  );
}

const firstLine = (text: string) => truncate(printable(text.split(/\r?\n|\r/)[0] ?? ""), 120);
/**
 * Text from the bridge as it may go to a terminal: a control character in a reply (an escape
 * sequence, a carriage return) would otherwise move the cursor or recolour the screen.
 */
const printable = (text: string) =>
  text.replace(/\r\n/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f\u009b]/g, (c) => {
    const named: Record<string, string> = { "\r": "\\r", "\u001b": "\\e" };
    return named[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`;
  });
const truncate = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);
