// The command line: argv to option values (runner/cli/options/), Ctrl-C handling, then one run.

import { usage } from "./cli/options/help.js";
import { parseCommandLine } from "./cli/options/parse.js";
import { UsageError } from "./cli/options/value.js";
import { conformance, type Deps, type Io, type Outcome, TOOL } from "./conformance.js";
import { reportOutputs } from "./outputs.js";
import { watchedDir, watchLoop } from "./watch.js";

export type { Io };

/**
 * Standard output and error. A reader that goes away (`... | head -2`) closes the pipe: what
 * is printed after that is dropped, quietly, while the run goes on to its end, writes its
 * report files, stops every process it started and exits with the code of its verdicts.
 */
export function processIo(): Io {
  const closed = new Set<NodeJS.WriteStream>();
  const guard = (stream: NodeJS.WriteStream) => {
    // Without a listener, the EPIPE of a closed pipe is an uncaught exception that kills the
    // run where it stands, and any bridge it started is left running.
    stream.on("error", () => closed.add(stream));
    return (text: string) => {
      if (!closed.has(stream) && !stream.destroyed) stream.write(text);
    };
  };
  return {
    out: guard(process.stdout),
    err: guard(process.stderr),
    env: process.env,
    live: Boolean(process.stdout.isTTY) && !process.env.CI,
  };
}

/** The whole command line: returns the exit code (0 pass, 1 a rule failed, 2 usage, 3 target unreachable). */
export async function main(argv: string[], io: Io = processIo(), deps: Deps = {}): Promise<number> {
  return (await runCli(argv, io, deps)).code;
}

export async function runCli(argv: string[], io: Io = processIo(), deps: Deps = {}): Promise<Outcome> {
  let parsed: ReturnType<typeof parseCommandLine>;
  try {
    parsed = parseCommandLine(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`aicontrol-conformance: ${err.message}\nRun with --help for usage.\n`);
    return { code: 2 };
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(`${usage()}\n`);
    return { code: 0 };
  }
  if (values.version) {
    io.out(`${TOOL.name} ${TOOL.version}\n`);
    return { code: 0 };
  }
  if (parsed.config?.found)
    io.err(`aicontrol-conformance: options from ${parsed.config.file} (found in the working directory)\n`);
  // Ctrl-C: finish the check under way, skip the rest, write every report, then exit 130.
  const interrupt = new AbortController();
  const stop = () => {
    io.err("aicontrol-conformance: interrupted; writing the report of what ran (press again to quit at once)\n");
    interrupt.abort();
    process.on("SIGINT", () => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    if (!values.watch) {
      const outcome = await conformance(values, positionals, io, { ...deps, signal: interrupt.signal });
      if (outcome.report && outcome.code !== 2) listWritten(values, io);
      return outcome;
    }
    if (!values.spawn) throw new UsageError("--watch restarts a bridge it starts itself: give --spawn CMD with it");
    const dir = watchedDir(String(values.watch));
    const reports = (values.report as string[] | undefined) ?? [];
    const ownFiles = [values.json, values.junit, values.html, values.markdown, values.saveFailures, ...reports]
      .filter((f): f is string => typeof f === "string" && f !== "-")
      .map((f) => f.replace(/^[a-z]+=/, ""));
    const code = await watchLoop(
      (first) => conformance(values, positionals, io, { ...deps, signal: interrupt.signal, first }),
      {
        dir,
        ownFiles,
        signal: interrupt.signal,
        say: (line) => io.err(`aicontrol-conformance: ${line}\n`),
      },
    );
    return { code };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`aicontrol-conformance: ${err.message}\nRun with --help for usage.\n`);
    return { code: 2 };
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}

/** The last line of a run: the report files it wrote, so none has to be looked for. */
function listWritten(values: ReturnType<typeof parseCommandLine>["values"], io: Io): void {
  if (values.quiet || values.list) return;
  const outputs = reportOutputs(values);
  const files = outputs.filter((o) => o.file !== "-").map((o) => `${o.file} (${o.format})`);
  if (!files.length) return;
  // Beside the human output: on stderr when a report has stdout to itself.
  const human = outputs.some((o) => o.file === "-") ? io.err : io.out;
  human(`reports written: ${files.join(", ")}\n`);
}
