// Every option, defined once. The command-line parser, --help, the YAML config (and its JSON
// Schema for editors) and the API's options type all come from OPTIONS.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { contract } from "../protocol/contract.js";
import { yaml } from "../protocol/yaml.js";
import { allChecks } from "../suites/index.js";
import { fileProblem } from "./files.js";

/** Bad usage or configuration: exit code 2. */
export class UsageError extends Error {}

type Kind = "string" | "boolean" | "integer" | "count" | "duration" | "list" | "choice";

interface Spec {
  kind: Kind;
  group: "Target" | "Selection" | "Generation" | "Replay and CI" | "Output";
  description: string;
  /** The placeholder shown in --help. */
  arg?: string;
  default?: string | number | boolean | readonly string[];
  choices?: readonly string[];
  /**
   * Durations: the unit of a plain number given through the API (the command line and a config
   * file take text with a unit), and the longest allowed (in ms).
   */
  unit?: "ms" | "s";
  max?: number;
  /** Integers: the smallest allowed. */
  min?: number;
  short?: string;
  /** Only on the command line (not in a config file or the API). */
  cliOnly?: true;
}

export const PROFILES = { quick: 15, standard: 100, thorough: 1000 } as const;
export type Profile = keyof typeof PROFILES;
/** Per profile, what one slow check (filling the event history) may spend. */
export const TIME_BUDGET: Record<Profile, number> = { quick: 3_000, standard: 20_000, thorough: 120_000 };

const HOUR = 3_600_000;

/** The tool's exit codes, for --help and the README alike. */
export const EXIT_CODES: readonly (readonly [number, string])[] = [
  [0, "no rule failed"],
  [1, "a rule failed or could not be judged (with --compare: a rule got worse)"],
  [2, "bad usage, configuration or an unwritable output (checked before connecting)"],
  [3, "the target could not be reached or started"],
  [130, "interrupted (the report of what ran is still written)"],
];

/** The exit codes of a reproducer that --export writes. */
export const REPRODUCER_EXIT: readonly (readonly [number, string])[] = [
  [0, "the bridge now behaves"],
  [1, "it still breaks the rule"],
  [2, "the token is missing or refused, or the replay never reached the case's state (COULD NOT REPLAY)"],
  [3, "a check without a machine oracle got another reply than recorded"],
  [4, "nothing listens"],
];

/** "0 x, 1 y, ...": a table of exit codes as one phrase. */
export const exitList = (table: readonly (readonly [number, string])[]) =>
  table.map(([code, meaning]) => `${code}: ${meaning}`).join("; ");

export const OPTIONS = {
  endpoint: { kind: "string", group: "Target", arg: "HOST:PORT", description: "a running bridge (IPv6 as [::1]:PORT)" },
  spawn: {
    kind: "string",
    group: "Target",
    arg: '"CMD ..."',
    description: 'start the bridge; its port is read from the first stdout line holding a JSON object with "port"',
  },
  exec: {
    kind: "string",
    group: "Target",
    arg: '"CMD {host} {port} {timeout} ..."',
    description: "client mode (`aicontrol-conformance client --exec ...`): the client command to test",
  },
  "client-timeout": {
    kind: "duration",
    group: "Target",
    unit: "ms",
    max: HOUR,
    default: 1000,
    description: "client mode: the timeout substituted for {timeout} (in seconds) in the client command",
  },
  "token-env": {
    kind: "string",
    group: "Target",
    arg: "VAR",
    default: contract.defaults.tokenEnv,
    description: "environment variable holding the token (never the token itself)",
  },
  "allow-remote": {
    kind: "boolean",
    group: "Target",
    description: "allow a non-loopback target (the wire is plaintext)",
  },
  "start-timeout": {
    kind: "duration",
    group: "Target",
    unit: "ms",
    max: HOUR,
    default: 30_000,
    description: "wait for a spawned bridge's ready line",
  },
  "wait-for-endpoint": {
    kind: "duration",
    group: "Target",
    unit: "ms",
    max: HOUR,
    description: "keep trying to connect to --endpoint this long before giving up (a bridge started in the background)",
  },
  contract: {
    kind: "string",
    group: "Selection",
    arg: "FILE",
    description: "judge against another revision of the upstream AiControlProtocol.json",
  },
  "allow-uncovered": {
    kind: "boolean",
    group: "Selection",
    description: "a rule of --contract that no check covers does not fail the run",
  },
  rules: {
    kind: "list",
    group: "Selection",
    arg: "GLOB,...",
    description: "only these rules (full or short IDs: wire.*)",
  },
  skip: { kind: "list", group: "Selection", arg: "GLOB,...", description: "leave these rules out" },
  check: {
    kind: "list",
    group: "Selection",
    arg: "ID",
    description: "only these checks (with --path: one exact case)",
  },
  profile: {
    kind: "choice",
    group: "Generation",
    choices: Object.keys(PROFILES),
    default: "standard",
    description: `cases per property: ${Object.entries(PROFILES)
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")}`,
  },
  runs: { kind: "count", group: "Generation", arg: "N", description: "cases per property (overrides the profile)" },
  seed: {
    kind: "integer",
    group: "Generation",
    arg: "N",
    description: "seed for every generator (default: random, printed)",
  },
  timeout: {
    kind: "duration",
    group: "Generation",
    unit: "ms",
    max: HOUR,
    default: 2000,
    description: "wait for one response",
  },
  strict: { kind: "boolean", group: "Generation", description: "warnings count as failures" },
  duration: {
    kind: "duration",
    group: "Generation",
    unit: "s",
    description: "after the checks, fuzz with fresh seeds until this much time has passed",
  },
  shard: { kind: "string", group: "Generation", arg: "I/N", description: "run only shard I of N (CI jobs)" },
  bail: { kind: "boolean", group: "Generation", description: "stop at the first failing check (as --max-failures 1)" },
  concurrency: {
    kind: "count",
    group: "Generation",
    arg: "N",
    description:
      "checks that share no bridge state run N at a time (default: 4 against a bridge this tool starts and " +
      "that serves a second connection, else 1); a failure found beside others is judged again alone",
  },
  recheck: {
    kind: "integer",
    group: "Generation",
    arg: "K",
    min: 0,
    default: 3,
    description:
      "re-send each failing minimal case K times (on a fresh bridge where this tool starts it): seen once " +
      "and never again is a warning, sometimes is flaky (0: off)",
  },
  "max-failures": {
    kind: "count",
    group: "Generation",
    arg: "N",
    description: "stop after N failing checks; the rest are skipped and the report is still written",
  },
  "last-failed": {
    kind: "string",
    group: "Replay and CI",
    arg: "REPORT",
    description:
      "the rules that failed (or could not be judged) in an earlier JSON report: its failing cases exactly " +
      "first, then its seed, then fresh cases, on its target unless one is given",
  },
  watch: {
    kind: "string",
    group: "Replay and CI",
    arg: "DIR",
    cliOnly: true,
    description: "with --spawn: when files under DIR change, restart the bridge and run again, failing rules first",
  },
  force: {
    kind: "boolean",
    group: "Replay and CI",
    description: "--merge reports of different targets, contracts or tool versions anyway",
  },
  replay: {
    kind: "string",
    group: "Replay and CI",
    arg: "FILE",
    description:
      "re-run each failing case of a JSON report exactly, on the report's target unless one is given: " +
      "FIXED, STILL FAILING, or COULD NOT REPLAY (exit 3)",
  },
  path: {
    kind: "string",
    group: "Replay and CI",
    arg: "P",
    description: "with one --check and --seed: replay one exact case",
  },
  "replay-path": {
    kind: "string",
    group: "Replay and CI",
    arg: "R",
    description: "with --path: the commands of a stateful case, as the report gives them",
  },
  merge: {
    kind: "boolean",
    group: "Replay and CI",
    cliOnly: true,
    description:
      "join the JSON reports named after the options into one: exactly one per shard of one --shard I/N split, of one seed",
  },
  baseline: {
    kind: "string",
    group: "Replay and CI",
    arg: "FILE",
    description: "known failures (YAML) do not fail the run; an entry that now passes does (stale)",
  },
  "write-baseline": {
    kind: "string",
    group: "Replay and CI",
    arg: "FILE",
    description:
      "write the failures of this run (a --replay: those still failing; a --merge: the merged ones) as a baseline for --baseline",
  },
  "baseline-until": {
    kind: "string",
    group: "Replay and CI",
    arg: "YYYY-MM-DD",
    description: "with --write-baseline: the last day its entries count (default: 90 days from today)",
  },
  "save-failures": {
    kind: "string",
    group: "Replay and CI",
    arg: "DIR",
    description: "keep every failing case; later runs with the same DIR replay them first",
  },
  export: {
    kind: "string",
    group: "Replay and CI",
    arg: "DIR",
    description:
      'write DIR/<check-id>.py ("/" in the ID as "__") per failing check: standalone Python 3 that re-sends ' +
      "the minimal case (token from --token-env's variable), judges the reply by the check's oracle and exits " +
      `${exitList(REPRODUCER_EXIT)}; ${withoutOracle()}`,
  },
  compare: {
    kind: "string",
    group: "Replay and CI",
    arg: "OLD.json",
    description:
      "print which rules changed verdict since OLD (--compare OLD NEW: two reports); exits 1 when a rule got worse",
  },
  json: { kind: "string", group: "Output", arg: "FILE", description: "the JSON report (- for stdout)" },
  junit: { kind: "string", group: "Output", arg: "FILE", description: "JUnit XML (- for stdout)" },
  html: { kind: "string", group: "Output", arg: "FILE", description: "a self-contained HTML report (- for stdout)" },
  markdown: { kind: "string", group: "Output", arg: "FILE", description: "a Markdown summary (- for stdout)" },
  report: {
    kind: "list",
    group: "Output",
    arg: "FORMAT=FILE",
    description: "any report by format name (json, junit, html, markdown)",
  },
  list: {
    kind: "boolean",
    group: "Output",
    description: "the selected rules, how each is observed and which checks cover it (as JSON with --json -)",
  },
  verbose: { kind: "boolean", group: "Output", short: "v", description: "details of warnings too" },
  quiet: { kind: "boolean", group: "Output", short: "q", description: "only the failures and the summary line" },
  config: {
    kind: "string",
    group: "Output",
    arg: "FILE",
    cliOnly: true,
    description: `options as YAML (keys are flag names; flags win); default ./${"aicontrol-conformance.config.yaml"}`,
  },
  help: { kind: "boolean", group: "Output", short: "h", cliOnly: true, description: "this text" },
  version: { kind: "boolean", group: "Output", cliOnly: true, description: "the tool's version" },
} as const satisfies Record<string, Spec>;

export type OptionName = keyof typeof OPTIONS;
export const CONFIG_FILE = "aicontrol-conformance.config.yaml";

type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type ValueOf<S> = S extends { kind: "boolean" }
  ? boolean
  : S extends { kind: "integer" | "count" | "duration" }
    ? number
    : S extends { kind: "list" }
      ? string[]
      : string;
type HasValue<S> = S extends { default: unknown } | { kind: "boolean" | "list" } ? true : false;

/** Every option's value, by camel-cased name; options without a default may be absent. */
export type OptionValues = {
  -readonly [N in OptionName as Camel<N>]: HasValue<(typeof OPTIONS)[N]> extends true
    ? ValueOf<(typeof OPTIONS)[N]>
    : ValueOf<(typeof OPTIONS)[N]> | undefined;
};

/** The options a config file or the API may set. */
export type SettableOptions = Partial<{
  [N in OptionName as (typeof OPTIONS)[N] extends { cliOnly: true } ? never : Camel<N>]: ValueOf<(typeof OPTIONS)[N]>;
}>;

export const camel = (name: string) => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
const specOf = (name: string): Spec | undefined => (OPTIONS as Record<string, Spec>)[name];

/**
 * A value for an option, from the command line (text) or from YAML / the API (typed); `where`
 * names its source. Only the API (`api`) may give a duration as a plain number, in its spec's unit.
 */
export function optionValue(name: string, raw: unknown, where: string, api = false): unknown {
  const spec = specOf(name);
  if (!spec) throw new UsageError(`${where}: unknown option "${name}"${suggest(name, Object.keys(OPTIONS))}`);
  const text = typeof raw === "string";
  const bad = (what: string): never => {
    throw new UsageError(`${where} must be ${what}, not ${JSON.stringify(raw)}`);
  };
  switch (spec.kind) {
    case "boolean":
      return typeof raw === "boolean" ? raw : bad("true or false");
    case "integer":
    case "count": {
      const n = text ? (/^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN) : raw;
      if (spec.kind === "count") {
        return Number.isSafeInteger(n) && (n as number) > 0 ? n : bad("a positive whole number");
      }
      if (spec.min !== undefined)
        return Number.isSafeInteger(n) && (n as number) >= spec.min && (n as number) < 2 ** 31
          ? n
          : bad(`a whole number of at least ${spec.min}`);
      return Number.isSafeInteger(n) && (n as number) >= -(2 ** 31) && (n as number) < 2 ** 31
        ? n
        : bad("a whole number in the 32-bit range");
    }
    case "duration": {
      // A bare number on the command line or in a config file is a unit left out, not milliseconds.
      const bare = text ? /^\s*\d+(?:\.\d+)?\s*$/.test(raw) : typeof raw === "number" && !api;
      if (bare && Number(raw) > 0) {
        const n = String(raw).trim();
        throw new UsageError(`${where} ${n}: add a unit: ${n}s or ${n}ms`);
      }
      const ms = text ? parseDuration(raw) : typeof raw === "number" ? raw * unitMs(spec.unit) : Number.NaN;
      if (!Number.isFinite(ms) || ms <= 0) bad(`a positive time such as 500ms, 2s, 10m or 1h`);
      const max = spec.max ?? 7 * 24 * HOUR;
      if (ms > max) bad(`at most ${max === HOUR ? "1h" : "a week"}`);
      return ms;
    }
    case "list": {
      const items = Array.isArray(raw) ? raw : [raw];
      if (!items.every((v) => typeof v === "string")) bad("a string or a list of strings");
      // Commas separate items, except inside a glob's braces: "wire.{utf8,ndjson},error.*" is two.
      return (items as string[])
        .flatMap((v) => v.split(/,(?![^{]*\})/))
        .map((s) => s.trim())
        .filter(Boolean);
    }
    case "choice":
      return typeof raw === "string" && spec.choices?.includes(raw) ? raw : bad(`one of ${spec.choices?.join(", ")}`);
    case "string":
      return typeof raw === "string" && raw.trim() !== "" ? raw : bad("a non-empty string");
  }
}

const unitMs = (unit: Spec["unit"]) => (unit === "s" ? 1000 : 1);

/** 500ms, 2s, 1.5m, 1h, in ms; text without a unit is not a duration. */
export function parseDuration(text: string): number {
  const m = DURATION.exec(text.trim());
  if (!m) return Number.NaN;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: HOUR }[m[2] as "ms"];
}

/** A time in ms as the options take it: 500ms, 2s, 10m, 1h. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["h", HOUR],
    ["m", 60_000],
    ["s", 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/;

/** Options as parsed: values by camel-cased name, plus the file names after --merge / --compare. */
export interface ParsedArgs {
  values: Partial<Record<string, unknown>>;
  positionals: string[];
  /** Where each value came from, for messages: "--timeout" or "config.yaml:3: timeout". */
  sources: Record<string, string>;
  /** The config file read, and whether it was found in the working directory (not named with --config). */
  config?: { file: string; found: boolean };
}

/** The command line, then the config file it names (or the one found in the working directory). */
export function parseCommandLine(argv: string[], cwdFiles: { exists(file: string): boolean } = defaultFs): ParsedArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      // A value that starts with a dash and a digit (--seed -3, --duration -5s) is the option's value.
      args: argv.flatMap((arg, i) =>
        /^-\d/.test(arg) && /^--[a-z-]+$/.test(argv[i - 1] ?? "")
          ? []
          : [/^--[a-z-]+$/.test(arg) && /^-\d/.test(argv[i + 1] ?? "") ? `${arg}=${argv[i + 1]}` : arg],
      ),
      strict: true,
      allowPositionals: true,
      options: Object.fromEntries(
        Object.entries(OPTIONS as Record<string, Spec>).map(([name, spec]) => [
          name,
          {
            type: spec.kind === "boolean" ? "boolean" : "string",
            ...(spec.kind === "list" ? { multiple: true } : {}),
            ...(spec.short ? { short: spec.short } : {}),
          },
        ]),
      ) as Parameters<typeof parseArgs>[0] extends { options?: infer O } ? O : never,
    });
  } catch (err) {
    throw new UsageError(argvProblem(err as Error & { code?: string }));
  }
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  const file = (parsed.values.config as string | undefined) ?? (cwdFiles.exists(CONFIG_FILE) ? CONFIG_FILE : undefined);
  if (file) {
    for (const [name, { value, line }] of Object.entries(readConfig(file))) {
      const where = `${file}:${line}: ${name}`;
      values[camel(name)] = optionValue(name, value, where);
      sources[camel(name)] = where;
    }
  }
  for (const [name, raw] of Object.entries(parsed.values)) {
    if (name === "config") continue;
    const where = `--${name}`;
    const spec = specOf(name)!;
    if (spec.kind !== "list" && Array.isArray(raw)) throw new UsageError(`${where} takes a single value`);
    values[camel(name)] = optionValue(name, raw, where);
    sources[camel(name)] = where;
  }
  const config = file ? { config: { file, found: parsed.values.config === undefined } } : {};
  return { values, positionals: parsed.positionals, sources, ...config };
}

/** What was wrong with the command line, said as a person would: the flag, and the flag meant. */
function argvProblem(err: Error & { code?: string }): string {
  const ambiguous = /^Option '(--[a-z-]+)' argument is ambiguous/.exec(err.message)?.[1];
  if (ambiguous) return `${ambiguous} needs a value (one that starts with a dash is given as ${ambiguous}=VALUE)`;
  const flag = /^Unknown option '([^']+)'/.exec(err.message)?.[1];
  if (err.code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION" || !flag) return err.message;
  if (/^--?token$/i.test(flag))
    return `unknown option ${flag} (tokens come only from the environment: --token-env VAR)`;
  const near = closest(flag.replace(/^--?/, ""), Object.keys(OPTIONS));
  return `unknown option ${flag}${near.length ? `; did you mean ${near.map((n) => `--${n}`).join(" or ")}?` : ""}`;
}

const defaultFs = {
  exists(file: string) {
    try {
      readFileSync(file);
      return true;
    } catch {
      return false;
    }
  },
};

/** A YAML config: option name -> value and the line it stands on. Tokens are never read from a file. */
export function readConfig(file: string): Record<string, { value: unknown; line: number }> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read config ${file}: ${fileProblem(err)}`);
  }
  const { isMap, isScalar, LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    throw new UsageError(`${file}:${e.linePos?.[0].line ?? "?"}: not valid YAML: ${e.message.split("\n")[0]}`);
  }
  if (doc.contents === null) return {};
  if (!isMap(doc.contents)) throw new UsageError(`${file}: must be a YAML mapping of option names to values`);
  const out: Record<string, { value: unknown; line: number }> = {};
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : "";
    const line = lines.linePos((pair.key as { range?: number[] } | null)?.range?.[0] ?? 0).line;
    if (key === "token") {
      throw new UsageError(
        `${file}:${line}: a token is never read from a file; put it in an environment variable and name it with token-env`,
      );
    }
    const spec = specOf(key);
    if (!spec || spec.cliOnly)
      throw new UsageError(`${file}:${line}: unknown option "${key}"${suggest(key, configKeys())}`);
    const node = pair.value as { toJSON?: () => unknown } | null;
    out[key] = { value: isScalar(node) ? node.value : doc.createNode(node).toJSON(), line };
  }
  return out;
}

const configKeys = () =>
  Object.entries(OPTIONS as Record<string, Spec>)
    .filter(([, s]) => !s.cliOnly)
    .map(([n]) => n);

/** The JSON Schema of the config file, for editors (shipped as aicontrol-conformance.config.schema.json). */
export function configJsonSchema(): object {
  const type = (spec: Spec): object => {
    switch (spec.kind) {
      case "boolean":
        return { type: "boolean" };
      case "integer":
        return { type: "integer", ...(spec.min !== undefined ? { minimum: spec.min } : {}) };
      case "count":
        return { type: "integer", minimum: 1 };
      case "duration":
        return { type: "string", pattern: DURATION.source };
      case "list":
        return { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] };
      case "choice":
        return { enum: spec.choices };
      case "string":
        return { type: "string", minLength: 1 };
    }
  };
  const properties = Object.fromEntries(
    Object.entries(OPTIONS as Record<string, Spec>)
      .filter(([, s]) => !s.cliOnly)
      .map(([name, spec]) => {
        const unit = spec.kind === "duration" ? " (with a unit: 500ms, 2s, 1.5m, 1h)" : "";
        return [
          name,
          {
            ...type(spec),
            description: spec.description + unit,
            ...(spec.default !== undefined
              ? { default: spec.kind === "duration" ? formatDuration(spec.default as number) : spec.default }
              : {}),
          },
        ];
      }),
  );
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "aicontrol-conformance config",
    type: "object",
    additionalProperties: false,
    properties,
  };
}

/** The checks without a machine oracle, each with the reason it gives: their reproducers compare replies instead. */
export function checksWithoutOracle(): { id: string; reason: string }[] {
  return allChecks.flatMap((c) => (c.noOracle ? [{ id: c.id, reason: c.noOracle }] : []));
}

/** The checks whose failures their replay command reproduces rather than a standalone script, each with why. */
export function checksReplayedOnly(): { id: string; reason: string }[] {
  return allChecks.flatMap((c) => (c.replayOnly ? [{ id: c.id, reason: c.replayOnly }] : []));
}

/** What --export does for the checks without a machine oracle (exit 3 on a changed reply), from the checks themselves. */
function withoutOracle(): string {
  const replayed = checksReplayedOnly().map((c) => c.id);
  const script = replayed.length ? `; no script for ${replayed.join(", ")} (its replay command reproduces it)` : "";
  return withoutOracleOnly() + script;
}

function withoutOracleOnly(): string {
  const listed = checksWithoutOracle();
  if (!listed.length) return "every check records its oracle, so 3 (changed: judge it yourself) is left for none";
  return `3 changed (judge it yourself) only for the checks without an oracle: ${listed
    .map((c) => `${c.id} (${c.reason})`)
    .join("; ")}`;
}

/** --help, from the table. */
export function usage(): string {
  const lines = [
    "Usage: aicontrol-conformance [options]            (default target: the built-in reference bridge)",
    '       aicontrol-conformance --endpoint HOST:PORT | --spawn "CMD ..." [options]',
    '       aicontrol-conformance client --exec "CMD {host} {port} {timeout} ..." [options]',
    "       aicontrol-conformance --merge shard1.json ... shardN.json [--json FILE]",
    "       aicontrol-conformance --compare OLD.json NEW.json",
  ];
  let group = "";
  for (const [name, spec] of Object.entries(OPTIONS as Record<string, Spec>)) {
    if (spec.group !== group) {
      group = spec.group;
      lines.push("", group);
    }
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.arg ? ` ${spec.arg}` : spec.kind === "duration" ? " TIME" : spec.kind === "choice" ? ` ${spec.choices?.join("|")}` : ""}`;
    const dflt =
      spec.default !== undefined && spec.kind !== "choice"
        ? ` (default ${spec.kind === "duration" ? formatDuration(spec.default as number) : spec.default})`
        : spec.kind === "choice"
          ? ` (default ${spec.default})`
          : "";
    lines.push(`  ${flag.padEnd(28)} ${spec.description}${dflt}`);
  }
  lines.push("", "Durations take a unit: 500ms, 2s, 1.5m, 1h.", "", "Exit codes:");
  for (const [code, meaning] of EXIT_CODES) lines.push(`  ${String(code).padEnd(4)} ${meaning}`);
  return lines.join("\n");
}

export function suggest(word: string, candidates: readonly string[]): string {
  const near = closest(word, candidates);
  return near.length ? ` (did you mean ${near.join(", ")}?)` : "";
}

/** Up to three candidates nearest a mistyped word, nearest first. */
function closest(word: string, candidates: readonly string[]): string[] {
  const stem = word
    .replace(/^ai-control-protocol\./, "")
    .replace(/\*/g, "")
    .toLowerCase();
  return candidates
    .map((c) => ({ c, d: c.toLowerCase().includes(stem) && stem.length > 2 ? 0 : distance(stem, c.toLowerCase()) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(stem.length / 3)))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map((x) => x.c);
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const keep = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = keep;
    }
  }
  return row[b.length]!;
}
