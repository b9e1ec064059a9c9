// Every option, defined once: one self-contained entry per flag. The parser, --help, the YAML
// config (and its JSON Schema for editors) and the API's options type all come from OPTIONS.
import { contract } from "../../../protocol/contract.js";
import { exitList, REPRODUCER_EXIT } from "./exit-codes.js";
import { withoutOracle } from "./no-oracle.js";

export type Kind = "string" | "boolean" | "integer" | "count" | "duration" | "list" | "choice";

export interface Spec {
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

export const HOUR = 3_600_000;
/** Bridges a spawned run deals its checks among (--lanes). */
export const DEFAULT_LANES = 3;

/** The config file read from the working directory when --config names none. */
export const CONFIG_FILE = "aicontrol-conformance.config.yaml";

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
  lanes: {
    kind: "count",
    group: "Generation",
    arg: "N",
    description:
      "with --spawn, start the bridge up to N times and run the checks on them side by side, each check on one " +
      `(1: one bridge; without it, up to ${DEFAULT_LANES} where the game loop takes 3 ms or more a command)`,
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
      "the checks that failed (or could not be judged) in an earlier JSON report, not those that passed: its " +
      "failing cases exactly first, then its seed, then fresh cases, on its target unless one is given",
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
export const specOf = (name: string): Spec | undefined => (OPTIONS as Record<string, Spec>)[name];
