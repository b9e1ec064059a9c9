// The programmatic API: the same run as the CLI, for bridge authors who test in TypeScript.
import { runCli } from "./runner/cli.js";
import type { Report } from "./runner/report.js";

export type { Report, RuleReport, CheckReport } from "./runner/report.js";
export type { Verdict } from "./suites/check.js";
export { ReferenceBridge, type BridgeOptions } from "./bridges/reference/bridge.js";

export interface ConformanceOptions {
  /** A running bridge, "HOST:PORT" (loopback unless allowRemote). */
  endpoint?: string;
  /** Or a command that starts the bridge and prints a JSON object with "port" on stdout. */
  spawn?: string;
  /** Name of the environment variable holding the token (default FONLINE_AI_TOKEN); never the token itself. */
  tokenEnv?: string;
  allowRemote?: boolean;
  /** Rule globs, full or short IDs: ["wire.*", "error.parse"]. */
  rules?: string[];
  skip?: string[];
  profile?: "quick" | "standard" | "thorough";
  runs?: number;
  seed?: number;
  timeoutMs?: number;
  strict?: boolean;
  baseline?: string;
  /** Report files to write as well. */
  json?: string;
  junit?: string;
  html?: string;
  markdown?: string;
  /** Print the console report (default: false). */
  print?: boolean;
  /** Environment to read the token from (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export class ConformanceError extends Error {
  constructor(message: string, readonly exitCode: number) { super(message); }
}

/**
 * Runs the suite and returns the report (the object the JSON reporter writes).
 * Throws ConformanceError for bad options (exitCode 2); an unreachable bridge gives a
 * report whose rules are `error` (the CLI's exit 3).
 */
export async function runConformance(options: ConformanceOptions = {}): Promise<Report> {
  const argv: string[] = [];
  const flag = (name: string, value: string | number | boolean | string[] | undefined) => {
    if (value === undefined || value === false) return;
    if (value === true) argv.push(`--${name}`);
    else argv.push(`--${name}=${Array.isArray(value) ? value.join(",") : String(value)}`);
  };
  flag("endpoint", options.endpoint); flag("spawn", options.spawn); flag("token-env", options.tokenEnv);
  flag("allow-remote", options.allowRemote); flag("rules", options.rules?.length ? options.rules : undefined);
  flag("skip", options.skip?.length ? options.skip : undefined); flag("profile", options.profile); flag("runs", options.runs);
  flag("seed", options.seed); flag("timeout", options.timeoutMs); flag("strict", options.strict); flag("baseline", options.baseline);
  flag("json", options.json); flag("junit", options.junit); flag("html", options.html); flag("markdown", options.markdown);
  let errors = "";
  const { code, report } = await runCli(argv, {
    out: (t) => { if (options.print) process.stdout.write(t); },
    err: (t) => { errors += t; if (options.print) process.stderr.write(t); },
    env: options.env ?? process.env,
  });
  if (!report) throw new ConformanceError(errors.trim().replace(/^aicontrol-conformance: /, "").split("\n")[0] ?? "bad options", code);
  return report;
}
