// The command line: argv through node:util's parseArgs, then the config file it names (or finds).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { readConfig } from "./config.js";
import { closest } from "./suggest.js";
import { CONFIG_FILE, camel, OPTIONS, type Spec, specOf } from "./table.js";
import { optionValue, UsageError } from "./value.js";

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
