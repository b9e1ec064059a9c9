import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import type { Contract, RuleId } from "../protocol/contract.js";
import { isLoopback, parseEndpoint } from "./target.js";

/** Bad usage or configuration: exit code 2. */
export class UsageError extends Error {}

export const PROFILES = { quick: 15, standard: 100, thorough: 1000 } as const;
export type Profile = keyof typeof PROFILES;
/** Per profile, what one slow check (filling the event history) may spend. */
export const TIME_BUDGET: Record<Profile, number> = { quick: 3_000, standard: 20_000, thorough: 120_000 };

export interface Options {
  endpoint?: { host: string; port: number };
  spawn?: string;
  tokenEnv: string;
  allowRemote: boolean;
  rules: string[];
  skip: string[];
  profile: Profile;
  runs: number;
  seed: number;
  replay?: string;
  check?: string[];
  path?: string;
  timeoutMs: number;
  startTimeoutMs: number;
  strict: boolean;
  list: boolean;
  help: boolean;
  version: boolean;
  verbose: boolean;
  json?: string;
  junit?: string;
  html?: string;
  markdown?: string;
  shard?: { index: number; count: number };
  durationMs?: number;
  /** Reports to merge into one (--merge a.json b.json ...). */
  merge?: string[];
  baseline?: string;
  saveFailures?: string;
  /** A report to compare this run with, or two reports to compare with each other. */
  compare?: string[];
}

const FLAGS = {
  endpoint: { type: "string" }, spawn: { type: "string" }, "token-env": { type: "string" }, "allow-remote": { type: "boolean" },
  rules: { type: "string", multiple: true }, skip: { type: "string", multiple: true }, runs: { type: "string" }, profile: { type: "string" },
  seed: { type: "string" }, replay: { type: "string" }, check: { type: "string", multiple: true }, path: { type: "string" },
  timeout: { type: "string" }, "start-timeout": { type: "string" }, strict: { type: "boolean" }, list: { type: "boolean" }, config: { type: "string" },
  json: { type: "string" }, junit: { type: "string" }, html: { type: "string" }, markdown: { type: "string" },
  shard: { type: "string" }, duration: { type: "string" }, merge: { type: "boolean" },
  baseline: { type: "string" }, "save-failures": { type: "string" }, compare: { type: "string" },
  verbose: { type: "boolean" }, help: { type: "boolean", short: "h" }, version: { type: "boolean" },
} as const;

export const USAGE = `Usage: aicontrol-conformance [target] [options]

Target (default: the built-in reference bridge on an ephemeral loopback port)
  --endpoint HOST:PORT   a running bridge (IPv6 as [::1]:PORT)
  --spawn "CMD ..."      start the bridge; its port is read from the first stdout line
                         holding a JSON object with "port"
  --token-env VAR        environment variable holding the token (default FONLINE_AI_TOKEN)
  --allow-remote         allow a non-loopback target (the wire is plaintext)

Selection and generation
  --rules GLOB,...       only these rules (full or short IDs: wire.*, error.parse)
  --skip GLOB,...        leave these rules out
  --profile NAME         quick | standard | thorough (cases per property: 15 | 100 | 1000)
  --runs N               cases per property (overrides the profile)
  --seed N               seed for every generator (default: random, printed)
  --timeout MS           wait for one response (default 2000)
  --start-timeout MS     wait for a spawned bridge's ready line (default 30000)
  --strict               warnings count as failures
  --replay FILE          re-run the failing cases of a JSON report: FIXED or STILL FAILING
  --check ID --path P    run one check (and with --seed, one exact case)
  --duration 10m         after the checks, fuzz with fresh seeds until the time is up
  --shard I/N            run every Nth check only (CI jobs); --merge a.json b.json ... joins the reports

CI gates
  --baseline FILE        known failures (YAML: known-failures: [{rule|check, reason}]) do not fail
                         the run; an entry that now passes does (stale), so the list only shrinks
  --save-failures DIR    save every failing case, a file per case in a folder per rule; later
                         runs with the same DIR replay those cases first
  --compare OLD.json     print which rules changed verdict since OLD (--compare OLD NEW: two reports)

Output
  --json FILE  --junit FILE  --html FILE  --markdown FILE
  --list                 every rule, how it is observed and which checks cover it
  --config FILE          options as YAML (keys are the flag names); flags win
  --verbose              details of warnings too

Exit: 0 no rule failed · 1 a rule failed or could not be judged · 2 bad usage · 3 target unreachable`;

export function parseOptions(argv: string[], contract: Contract): Options {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}${/token/i.test((err as Error).message) ? " (tokens come only from the environment: --token-env VAR)" : ""}`);
  }
  const flags = parsed.values as Record<string, unknown>;
  if (parsed.positionals.length && !flags.merge && !(flags.compare && parsed.positionals.length === 1)) {
    throw new UsageError(`unexpected argument "${parsed.positionals[0]}" (only --merge and --compare OLD NEW take file names)`);
  }
  const config = flags.config ? readConfig(flags.config as string) : {};
  const get = <T>(name: keyof typeof FLAGS): T | undefined => (flags[name] ?? config[name]) as T | undefined;
  const list = (name: "rules" | "skip" | "check"): string[] => {
    const raw = get<unknown>(name);
    const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    return values.flatMap((v) => String(v).split(",")).map((s) => s.trim()).filter(Boolean);
  };

  const options: Options = {
    tokenEnv: stringOption(get("token-env"), "token-env") ?? contract.defaults.tokenEnv,
    allowRemote: Boolean(get("allow-remote")),
    rules: list("rules"), skip: list("skip"), check: list("check"),
    profile: "standard", runs: 0, seed: 0,
    timeoutMs: positiveNumber(get("timeout") ?? 2000, "--timeout", "milliseconds"),
    startTimeoutMs: positiveNumber(get("start-timeout") ?? 30_000, "--start-timeout", "milliseconds"),
    strict: Boolean(get("strict")), list: Boolean(get("list")), help: Boolean(get("help")), version: Boolean(get("version")), verbose: Boolean(get("verbose")),
  };
  const profile = get<string>("profile") ?? "standard";
  if (!(profile in PROFILES)) throw new UsageError(`--profile must be one of ${Object.keys(PROFILES).join(", ")}, not "${profile}"`);
  options.profile = profile as Profile;
  options.runs = get("runs") === undefined ? PROFILES[options.profile] : positiveInteger(get("runs"), "--runs");
  options.seed = get("seed") === undefined ? Math.floor(Math.random() * 2 ** 31) : integer(get("seed"), "--seed");
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.tokenEnv)) throw new UsageError(`--token-env takes the name of an environment variable, not "${options.tokenEnv.length > 40 ? "a long value" : "a value like that"}"`);

  const endpoint = stringOption(get("endpoint"), "endpoint");
  const spawn = stringOption(get("spawn"), "spawn");
  if (endpoint && spawn) throw new UsageError("give either --endpoint or --spawn, not both");
  if (endpoint) {
    const parsedEndpoint = parseEndpoint(endpoint);
    if (!parsedEndpoint) throw new UsageError(`--endpoint must be HOST:PORT with a port from 1 to 65535 (IPv6 as [::1]:PORT), not "${endpoint}"`);
    if (!isLoopback(parsedEndpoint.host) && !options.allowRemote) {
      throw new UsageError(`${endpoint} is not a loopback address: the wire is plaintext, so pass --allow-remote to test a remote bridge on purpose`);
    }
    options.endpoint = parsedEndpoint;
  }
  if (spawn !== undefined) {
    if (spawn.trim() === "") throw new UsageError("--spawn needs a command");
    options.spawn = spawn;
  }
  for (const key of ["json", "junit", "html", "markdown", "replay", "path"] as const) {
    const value = stringOption(get(key), key);
    if (value !== undefined) options[key] = value;
  }
  const baseline = stringOption(get("baseline"), "baseline");
  if (baseline !== undefined) options.baseline = baseline;
  const saveFailures = stringOption(get("save-failures"), "save-failures");
  if (saveFailures !== undefined) options.saveFailures = saveFailures;
  const compare = stringOption(get("compare"), "compare");
  if (compare !== undefined) options.compare = flags.merge ? [compare] : [compare, ...parsed.positionals];
  if (flags.merge) {
    if (parsed.positionals.length === 0) throw new UsageError("--merge takes the JSON reports to merge: --merge a.json b.json ...");
    options.merge = parsed.positionals;
  }
  const shard = stringOption(get("shard"), "shard");
  if (shard !== undefined) {
    const m = /^(\d+)\/(\d+)$/.exec(shard);
    const [index, count] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
    if (!m || count < 1 || index < 1 || index > count) throw new UsageError(`--shard takes I/N with 1 <= I <= N, e.g. 2/4, not "${shard}"`);
    options.shard = { index, count };
  }
  const duration = stringOption(get("duration"), "duration");
  if (duration !== undefined) options.durationMs = parseDuration(duration);
  if (options.path && options.check?.length !== 1) throw new UsageError("--path replays one case: give exactly one --check ID with it");
  validateGlobs(options.rules, "--rules", contract);
  validateGlobs(options.skip, "--skip", contract);
  return options;
}

/** 90s, 10m, 1h, 5000ms, or plain seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  const ms = m ? Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? "s") as "s"] : NaN;
  if (!Number.isFinite(ms) || ms <= 0) throw new UsageError(`--duration takes a time such as 90s, 10m or 1h, not "${text}"`);
  if (ms > 7 * 24 * 3_600_000) throw new UsageError(`--duration must be at most a week, not "${text}"`);
  return ms;
}

function readConfig(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read --config ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    throw new UsageError(`--config ${file} is not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new UsageError(`--config ${file} must be a YAML mapping of option names to values`);
  const config = value as Record<string, unknown>;
  for (const key of Object.keys(config)) {
    if (key === "token") throw new UsageError(`--config ${file}: a token is never read from a file; put it in an environment variable and name it with token-env`);
    if (!(key in FLAGS) || key === "config") throw new UsageError(`--config ${file}: unknown option "${key}"${suggest(key, Object.keys(FLAGS))}`);
  }
  return config;
}

function stringOption(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" && typeof value !== "number") throw new UsageError(`${name} takes a single value`);
  return String(value);
}

/** The longest wait any timer here can express (and far more than any bridge should need). */
const MAX_MS = 3_600_000;

function positiveNumber(value: unknown, flag: string, unit: string): number {
  const n = typeof value === "number" ? value : Number(String(value).trim() === "" ? NaN : value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`${flag} must be a finite positive number of ${unit}, not "${value}"`);
  if (n > MAX_MS) throw new UsageError(`${flag} must be at most ${MAX_MS} ${unit} (one hour), not ${value}`);
  return n;
}

function positiveInteger(value: unknown, flag: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new UsageError(`${flag} must be a positive whole number, not "${value}"`);
  return n;
}

function integer(value: unknown, flag: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) throw new UsageError(`${flag} must be a whole number in the 32-bit range, not "${value}"`);
  return n;
}

/** Does a --rules/--skip glob match a rule (by short or full ID)? */
export function globMatches(glob: string, rule: { id: string; fullId: string }): boolean {
  const re = new RegExp(`^${glob.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  return re.test(rule.id) || re.test(rule.fullId);
}

function validateGlobs(globs: string[], flag: string, contract: Contract): void {
  for (const glob of globs) {
    if (contract.rules.some((r) => globMatches(glob, r))) continue;
    throw new UsageError(`${flag} ${glob} matches no rule${suggest(glob, contract.rules.map((r) => r.id))}; --list shows them all`);
  }
}

/** Selection predicate from --rules and --skip. */
export function ruleSelector(options: Pick<Options, "rules" | "skip">, contract: Contract): (id: RuleId) => boolean {
  return (id) => {
    const rule = contract.rule(id);
    const wanted = options.rules.length === 0 || options.rules.some((g) => globMatches(g, rule));
    return wanted && !options.skip.some((g) => globMatches(g, rule));
  };
}

function suggest(word: string, candidates: string[]): string {
  const stem = word.replace(/^ai-control-protocol\./, "").replace(/\*/g, "").toLowerCase();
  const scored = candidates
    .map((c) => ({ c, d: c.toLowerCase().includes(stem) && stem.length > 2 ? 0 : distance(stem, c.toLowerCase()) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(stem.length / 3)))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3);
  return scored.length ? ` (did you mean ${scored.map((x) => x.c).join(", ")}?)` : "";
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
