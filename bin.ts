#!/usr/bin/env node
// The command-line entry point: the CLI, with the reference bridge as the built-in target.
import { ReferenceBridge } from "./bridges/reference/bridge.js";
import { main } from "./runner/cli.js";

main(process.argv.slice(2), undefined, { builtIn: (options) => new ReferenceBridge(options) }).then(
  (code) => {
    process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`aicontrol-conformance: internal error: ${err.stack ?? err}\n`);
    process.exitCode = 1;
  },
);
