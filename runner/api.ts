// The programmatic API: the same run as the CLI, from an options object. No argv, no signal
// handler, no output but the report files asked for (and the console only when `print`).

import type { Report } from "../reports/types.js";
import { camel, OPTIONS, type SettableOptions } from "./cli/options/table.js";
import { optionValue } from "./cli/options/value.js";
import { conformance, type Deps } from "./conformance.js";

export interface ConformanceOptions extends SettableOptions {
  /** Print the console report (default: false). */
  print?: boolean;
  /** Environment to read the token from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Stops the run: the checks left are skipped and the report is still written. */
  signal?: AbortSignal;
}

export class ConformanceError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/**
 * Runs the suite and returns the report (the object the JSON reporter writes). Throws
 * ConformanceError for bad options (exitCode 2); an unreachable bridge gives a report whose
 * rules are `error` (the CLI's exit 3).
 */
export async function runConformance(options: ConformanceOptions = {}, deps: Deps = {}): Promise<Report> {
  const { print, env, signal, ...rest } = options;
  const names = new Map(Object.keys(OPTIONS).map((n) => [camel(n), n]));
  const values: Record<string, unknown> = {};
  let errors = "";
  try {
    for (const [key, value] of Object.entries(rest)) {
      if (value === undefined) continue;
      const name = names.get(key);
      if (!name || (OPTIONS as Record<string, { cliOnly?: true }>)[name]?.cliOnly) {
        throw new ConformanceError(`unknown option "${key}"`, 2);
      }
      values[key] = optionValue(name, value, key, true);
    }
  } catch (err) {
    if (err instanceof ConformanceError) throw err;
    throw new ConformanceError((err as Error).message, 2);
  }
  const { code, report } = await conformance(
    values,
    [],
    {
      out: (t) => {
        if (print) process.stdout.write(t);
      },
      err: (t) => {
        errors += t;
        if (print) process.stderr.write(t);
      },
      env: env ?? process.env,
      console: Boolean(print),
    },
    { ...deps, signal },
  );
  if (!report) {
    throw new ConformanceError(
      errors
        .trim()
        .replace(/^aicontrol-conformance: /, "")
        .split("\n")[0] ?? "bad options",
      code,
    );
  }
  return report;
}
