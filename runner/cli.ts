// The command line: argv to option values (runner/options.ts), Ctrl-C handling, then one run.
import { conformance, type Deps, type Io, type Outcome, TOOL } from "./conformance.js";
import { parseCommandLine, UsageError, usage } from "./options.js";
import { watchedDir, watchLoop } from "./watch.js";

export type { Io };

const processIo: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
  env: process.env,
  live: Boolean(process.stdout.isTTY) && !process.env.CI,
};

/** The whole command line: returns the exit code (0 pass, 1 a rule failed, 2 usage, 3 target unreachable). */
export async function main(argv: string[], io: Io = processIo, deps: Deps = {}): Promise<number> {
  return (await runCli(argv, io, deps)).code;
}

export async function runCli(argv: string[], io: Io = processIo, deps: Deps = {}): Promise<Outcome> {
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
    if (!values.watch) return await conformance(values, positionals, io, { ...deps, signal: interrupt.signal });
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
