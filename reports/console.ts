import pc from "picocolors";
import { cleanMessage, decidingChecks, knownFailures, reproducibility, targetNotes } from "./output.js";
import { rootCauseLine } from "./root-causes.js";
import { stateCoverageLine } from "./state-coverage.js";
import type { CheckReport, ReasonKind, Report, Reporter, RuleReport, Verdict } from "./types.js";

type Colors = ReturnType<typeof pc.createColors>;
type Paint = Record<Verdict, (s: string) => string>;

const MARK: Record<Verdict, string> = { pass: "✓", fail: "✗", warn: "!", skip: "-", error: "?" };
const paintOf = (c: Colors): Paint => ({ pass: c.green, fail: c.red, warn: c.yellow, skip: c.dim, error: c.magenta });

// Rules the user left out of this run (--rules / --skip, --check, a replay, another shard, a
// bridge's rule in client mode): listing them row by row buries the rules that ran, so they are
// counted unless --verbose.
const NOT_CHOSEN: readonly ReasonKind[] = ["not-chosen", "other-shard", "bridge-duty"];
/** A check a stopped run did not reach (--bail, --max-failures, Ctrl-C): its message says why, after this. */
const notRunCheck = (check: CheckReport) => check.reasonKind === "not-run";
const NOT_RUN = /^not run: /;

export interface ConsoleOptions {
  write?: (text: string) => void;
  verbose?: boolean;
  /** Only the failures and the summary: no progress, no per-rule table. */
  quiet?: boolean;
  /**
   * A replay's: its own reporter prints a verdict per case and the detail of failures; the console
   * adds only what went wrong with the target and the summary line.
   */
  replay?: boolean;
  /** A live progress line, rewritten in place (default: stdout is a TTY and not under CI); never without a TTY. */
  live?: boolean;
  /** Whether the output is a terminal (default: stdout's). Without one, output is plain text. */
  tty?: boolean;
  /** The terminal's width (default: stdout's; unknown or 0: 80): the live line never wraps past it, long text wraps to it. */
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
  const verbose = options.verbose ?? false;
  const quiet = options.quiet || options.replay;
  // A terminal may report 0 columns (an editor's pane, a serial console): as unknown, 80.
  const width = () => {
    const columns = options.columns ?? process.stdout.columns;
    return columns && columns > 0 ? columns : 80;
  };
  // Text is never cut: on a terminal it wraps to its width under the column it starts in;
  // in a pipe, a file or under --verbose it stays one line, whole.
  const shape: Fit = (text, indent, start) => (tty && !verbose ? wrap(text, width(), indent, start) : text);
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
    const text = `  [${current.index + 1}/${current.total}] ${current.id} · ${failures} failing · ${((Date.now() - started) / 1000).toFixed(1)} s`;
    // One column short of the width: a line that fills it wraps on some terminals, and
    // the next carriage return would then rewrite only its second half.
    out(c.dim(truncate(text, Math.max(10, width() - 1))));
  };
  return {
    name: "console",
    onRunStart({ target, seed, checks, profile, strict }) {
      started = Date.now();
      if (quiet) return;
      line(c.bold("aicontrol-conformance") + c.dim(` · ${target.label}`));
      line(c.dim(`${checks} checks · profile ${profile} · seed ${seed}${strict ? " · strict" : ""}`));
      line();
    },
    onCheckStart(check, index, total) {
      if (!live || quiet) return;
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
      if ((live && result.verdict === "pass") || quiet) return;
      // What a stopped run did not reach is said once, at the end.
      if (notRunCheck(result)) return;
      const took = `${result.durationMs ?? 0} ms`;
      const start = `  ${MARK[result.verdict]} ${check.id} ${took}`.length;
      const note =
        result.verdict === "pass" ? "" : ` · ${shape(firstLine(cleanMessage(result.message)), 4, start + 3)}`;
      line(`  ${paint[result.verdict](MARK[result.verdict])} ${check.id} ${c.dim(`${took}${note}`)}`);
    },
    onRunEnd(report) {
      clearInterval(ticker);
      ticker = undefined;
      current = undefined;
      clear();
      printRunEnd(report, { line, c, paint, verbose, quiet, replay: options.replay, shape });
    },
  };
}

/** How the end of a run is printed: the line writer, colours, and the options that shape it. */
interface Printer {
  line: (text?: string) => void;
  c: Colors;
  paint: Paint;
  verbose: boolean;
  quiet: boolean | undefined;
  replay: boolean | undefined;
  shape: Fit;
}

/** The end of a run: the table, the root cause, each failing check, what was not run, the summary. */
function printRunEnd(report: Report, { line, c, paint, verbose, quiet, replay, shape }: Printer): void {
  if (report.blocked && !verbose) {
    // No check could be judged: one root cause, said first, and the count; the table of
    // `error` rows it would print says nothing more (it is in the report files, and under -v).
    for (const note of targetNotes(report)) line(paint.error(c.bold(shape(printable(note), 0))));
    line(paint.error(c.bold(shape(`No check could be judged: ${printable(report.blocked)}`, 0))));
    line(summaryLine(report, c));
    return;
  }
  const known = knownFailures(report);
  if (!quiet) {
    line();
    printTable(report, known, line, c, verbose, shape);
  }
  // The root cause first: every "inconclusive" below follows from it.
  for (const note of targetNotes(report)) {
    line();
    line(paint.error(c.bold(shape(printable(note), 0))));
  }
  if (report.blocked) {
    // One root cause, said once, instead of the same message under every rule.
    line();
    line(paint.error(c.bold(shape(`No check could be judged: ${printable(report.blocked)}`, 0))));
  } else if (!replay) {
    printDetails(report, known, line, c, verbose, shape);
  }
  const stops = notRun(report);
  if (stops.length) line();
  for (const stop of stops) line(c.bold(stop));
  line();
  line(summaryLine(report, c));
  if (report.wire && !quiet) line(c.dim(timeLine(report)));
  if (stateCoverageLine(report) && !quiet) line(c.dim(stateCoverageLine(report)!));
  if (rootCauseLine(report)) line(rootCauseLine(report)!);
  if (!report.blocked && !replay) printFailedRules(report, known, line, c);
}

/** Text as it may be printed: wrapped to a terminal's width (later lines at `indent`), else whole. */
type Fit = (text: string, indent: number, start?: number) => string;

function printTable(
  report: Report,
  known: Map<string, string>,
  line: (t?: string) => void,
  c: Colors,
  verbose: boolean,
  shape: Fit,
): void {
  const paint = paintOf(c);
  const hidden = verbose ? [] : report.rules.filter(notChosen);
  const unreached = verbose ? [] : report.rules.filter(notReached);
  const rows = report.rules.filter((r) => !hidden.includes(r) && !unreached.includes(r));
  let group = "";
  const width = Math.max(0, ...rows.map((r) => r.id.length));
  for (const rule of rows) {
    if (rule.group !== group) {
      group = rule.group;
      line(c.bold(group));
    }
    const reason = known.get(rule.id);
    const note =
      reason !== undefined
        ? `known failure (baseline): ${reason}`
        : rule.verdict === "skip"
          ? (rule.reason ?? rule.checks[0]?.message ?? "")
          : rule.checks
              .filter((x) => x.verdict === rule.verdict)
              .map((x) => x.id)
              .join(", ");
    const label =
      reason !== undefined ? paint.warn("KNOWN") : paint[rule.verdict](rule.verdict.toUpperCase().padEnd(5));
    const indent = 2 + 5 + 1 + width + 2;
    line(`  ${label} ${rule.id.padEnd(width)}  ${c.dim(shape(printable(note), indent))}`);
    for (const said of rule.notes ?? []) line(`        ${c.dim(shape(`note: ${printable(said)}`, 14))}`);
  }
  const duties = hidden.filter((r) => r.reasonKind === "bridge-duty").length;
  if (hidden.length > duties)
    line(c.dim(`  ${hidden.length - duties} rule(s) not selected for this run (--verbose lists them)`));
  if (duties) line(c.dim(`  ${duties} rule(s) binding only bridges, not judged in client mode (--verbose lists them)`));
  if (unreached.length) line(c.dim(`  ${unreached.length} rule(s) not reached before the run stopped`));
}

/** Rules whose every check a stopped run did not reach. */
const notReached = (rule: RuleReport) =>
  rule.verdict === "skip" && rule.checks.length > 0 && rule.checks.every(notRunCheck);

/** Why a run stopped early, and how many checks it did not reach: one line per cause. */
function notRun(report: Report): string[] {
  const byCause = new Map<string, Set<string>>();
  for (const check of report.rules.flatMap((r) => r.checks)) {
    if (!notRunCheck(check)) continue;
    const cause = check.message.replace(NOT_RUN, "");
    (byCause.get(cause) ?? byCause.set(cause, new Set()).get(cause)!).add(check.id);
  }
  return [...byCause].map(([cause, ids]) => `${cause}; ${ids.size} check${ids.size === 1 ? "" : "s"} not run`);
}

const notChosen = (rule: RuleReport) =>
  rule.verdict === "skip" && rule.reasonKind !== undefined && NOT_CHOSEN.includes(rule.reasonKind);

/**
 * Under each failing rule, its failing checks; a check that covers several rules is printed
 * in full once, under the first of them, and later rules point back to it.
 */
function printDetails(
  report: Report,
  known: Map<string, string>,
  line: (t?: string) => void,
  c: Colors,
  verbose: boolean,
  shape: Fit,
): void {
  const paint = paintOf(c);
  const shown: Verdict[] = verbose ? ["fail", "error", "warn"] : ["fail", "error"];
  // Known failures are in the table with the baseline's reason; their details under --verbose.
  const rules = report.rules.filter((r) => shown.includes(r.verdict) && (verbose || !known.has(r.id)));
  const deciding = new Map(decidingChecks({ ...report, rules }, shown).map((d) => [d.check.id, d]));
  for (const rule of rules) {
    const reason = known.get(rule.id);
    line();
    const title = `${reason !== undefined ? "KNOWN" : rule.verdict.toUpperCase()} ${rule.id}`;
    line(`${(reason !== undefined ? paint.warn : paint[rule.verdict])(c.bold(title))} ${c.dim(`(${rule.level})`)}`);
    if (reason !== undefined) line(`  ${c.dim("known:")} ${shape(printable(reason), 9)}`);
    line(`  ${c.dim("rule:")} ${shape(rule.requirement, 8)}`);
    if (rule.reason && !rule.checks.length) line(`  ${c.dim("why:")}  ${shape(printable(rule.reason), 8)}`);
    for (const check of rule.checks.filter((x) => x.verdict === rule.verdict)) {
      const entry = deciding.get(check.id);
      const first = entry?.rules[0];
      if (entry && first && first !== rule) {
        line(`  ${c.bold(check.id)}: ${c.dim(`shown above under ${first.id}`)}`);
        continue;
      }
      printCheck(check, rule, entry?.rules ?? [rule], line, c, shape);
    }
  }
}

function printCheck(
  check: CheckReport,
  rule: RuleReport,
  rules: RuleReport[],
  line: (t?: string) => void,
  c: Colors,
  shape: Fit,
): void {
  const label = (name: string) => c.dim(`${name}:`.padEnd(14));
  const message = printable(cleanMessage(check.message)).split("\n");
  line(`  ${c.bold(check.id)}: ${shape(message[0] ?? "", 4, check.id.length + 4)}`);
  for (const more of message.slice(1)) line(`    ${shape(more, 4)}`);
  if (rules.length > 1)
    line(
      `    ${label("also fails")}${rules
        .filter((r) => r !== rule)
        .map((r) => r.id)
        .join(", ")}`,
    );
  if (check.requirement && check.requirement !== rule.requirement)
    line(`    ${label("requirement")}${shape(check.requirement, 18)}`);
  if (check.expected !== undefined) line(`    ${label("expected")}${printable(check.expected)}`);
  if (check.actual !== undefined) line(`    ${label("actual")}${truncate(printable(check.actual), 400)}`);
  if (check.counterexample !== undefined)
    line(`    ${label("minimal case")}${truncate(printable(check.counterexample), 400)}`);
  const again = reproducibility(check);
  if (again) line(`    ${label("rechecked")}${check.reproduced?.grade === "flaky" ? c.bold(again) : again}`);
  if (check.replay !== undefined) line(`    ${label("replay")}${check.replay}`);
}

/** The last lines: what to fix, by rule ID, so a long run's verdict is not scrolled away. */
function printFailedRules(report: Report, known: Map<string, string>, line: (t?: string) => void, c: Colors): void {
  const paint = paintOf(c);
  const failed = report.rules.filter((r) => (r.verdict === "fail" || r.verdict === "error") && !known.has(r.id));
  if (!failed.length) return;
  line();
  line(c.bold(`Failed rules (${failed.length}):`));
  for (const rule of failed) line(`  ${paint[rule.verdict](rule.verdict.toUpperCase().padEnd(5))} ${rule.id}`);
}

/** "50 rules: 29 pass, 3 fail, ...", with failures the baseline accepts counted apart as known. */
export function summaryLine(report: Report, c: Colors = colorsFor(Boolean(process.stdout.isTTY))): string {
  const paint = paintOf(c);
  const known = knownFailures(report);
  const s = { ...report.summary };
  for (const id of known.keys()) {
    const verdict = report.rules.find((r) => r.id === id)!.verdict;
    s[verdict]--;
  }
  const parts = (["pass", "fail", "warn", "error", "skip"] as Verdict[]).map((v) => paint[v](`${s[v]} ${v}`));
  if (known.size) parts.splice(2, 0, paint.warn(`${known.size} known`));
  return `${report.rules.length} rules: ${parts.join(", ")} ${c.dim(`(${(report.durationMs / 1000).toFixed(1)} s)`)}`;
}

/** Where the time went: the run's wall time, what crossed the wire, and how long it waited for the bridge. */
export function timeLine(report: Report): string {
  const w = report.wire!;
  const size = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const t = report.time;
  // Only what took a noticeable share is named: a clean run reads as before.
  const parts = t
    ? (
        [
          [t.restartsMs, "restarting the bridge"],
          [t.shrinkingMs, "shrinking"],
          [t.recheckingMs, "rechecking"],
          [t.completionsMs, "waiting for completions"],
        ] as const
      )
        .filter(([ms]) => ms >= 100)
        .map(([ms, what]) => `, ${s(ms)} ${what}`)
        .join("")
    : "";
  const pace =
    t && t.completionsMs >= 100
      ? ` (a completion waited for up to ${t.completionWaitMs} ms: the slowest step of the game loop seen took ${t.slowestStepMs} ms)`
      : "";
  const traffic = `${w.lines.toLocaleString("en")} line${w.lines === 1 ? "" : "s"} sent (${size(w.bytesSent)}), ${size(w.bytesReceived)} received`;
  if (t?.parts) {
    // Parts that add up to the total, then what was spent within them.
    const p = t.parts;
    const named = (
      [
        [p.restartingMs, "restarting the bridge"],
        [p.recheckingMs, "rechecking"],
        [p.shrinkingMs, "shrinking"],
      ] as const
    )
      .filter(([ms]) => ms >= 100)
      .map(([ms, what]) => `${s(ms)} ${what}, `)
      .join("");
    const sum = p.overlap
      ? "the checks beside one another shrank at once, so these overlap"
      : t.lanes
        ? `these add up to the bridges' ${s(t.lanes.totalMs)} together`
        : "these add up to the total";
    const within = t.completionsMs >= 100 ? ` and ${s(t.completionsMs)} waiting for completions${pace}` : "";
    const lanes = t.lanes ? ` on ${t.lanes.count} bridges side by side` : "";
    return (
      `time: ${s(report.durationMs)}${lanes}: ${named}${s(p.checksMs)} running the checks (${sum}); within them ` +
      `${s(w.waitingMs)} waiting on the bridge${within}; ${traffic}`
    );
  }
  return (
    `time: ${s(report.durationMs)}, of it ${s(w.waitingMs)} waiting on the bridge${parts}${pace}; ` +
    `${w.lines.toLocaleString("en")} line${w.lines === 1 ? "" : "s"} sent (${size(w.bytesSent)}), ${size(w.bytesReceived)} received`
  );
}

const firstLine = (text: string) => printable(text.split(/\r?\n|\r/)[0] ?? "");

/**
 * Text wrapped at spaces to lines of at most `width` columns: the first line starts at column
 * `start`, the others at `indent` (at 4 where that leaves too little room). Nothing is cut: a
 * word longer than a line is split across lines.
 */
export function wrap(text: string, width: number, indent: number, start = indent): string {
  const hang = width - indent >= 20 ? indent : 4;
  const full = Math.max(1, width - hang);
  const lines: string[] = [];
  let current = "";
  let room = width - start;
  for (let word of text.split(" ")) {
    // Too little room left on the caller's line for the first word: begin on the next.
    if (!lines.length && !current && word.length > room && room < 20) {
      lines.push("");
      room = full;
    }
    if (current && current.length + 1 + word.length > room) {
      lines.push(current);
      current = "";
      room = full;
    }
    while (!current && word.length > room) {
      lines.push(word.slice(0, Math.max(1, room)));
      word = word.slice(Math.max(1, room));
      room = full;
    }
    current = current ? `${current} ${word}` : word;
  }
  lines.push(current);
  return lines.join(`\n${" ".repeat(hang)}`);
}
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
