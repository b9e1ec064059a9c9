#!/usr/bin/env node
// The command-line entry point: the CLI, with the reference bridge as the built-in target.
import { ReferenceBridge } from "./bridges/reference/bridge.js";
import { main } from "./runner/cli.js";

/**
 * Resolves once everything written to `stream` so far has been handed to the OS (pipes may be
 * asynchronous), or at once where the reader has gone and nothing more can be handed over.
 */
const drained = (stream: NodeJS.WriteStream) =>
  new Promise<void>((resolve) => {
    if (stream.destroyed || stream.writableEnded) resolve();
    else stream.write("", () => resolve());
  });

main(process.argv.slice(2), undefined, { builtIn: (options) => new ReferenceBridge(options) }).then(
  async (code) => {
    // The report is written and every bridge this run started is stopped: nothing is left to
    // wait for but the output, so a stray timer of a check or a bridge cannot hold the exit.
    await Promise.all([drained(process.stdout), drained(process.stderr)]);
    process.exit(code);
  },
  (err: Error) => {
    process.stderr.write(`aicontrol-conformance: internal error: ${err.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
