#!/usr/bin/env node
// Runs the reference bridge (or a mutant of it) as a process, for --spawn and for trying the tool out.
// Prints AICONTROL_BRIDGE_READY {"host":...,"port":...} once it listens.
import { parseArgs } from "node:util";
import { contract } from "../../protocol/contract.js";
import { flaky } from "../mutants/flaky.js";
import { mutants } from "../mutants/index.js";
import { type BridgeOptions, ReferenceBridge } from "./bridge.js";

const USAGE =
  "usage: cli.js [--host 127.0.0.1|::1|localhost] [--port N] [--token-env VAR] [--max-commands N] " +
  "[--max-events N] [--drain-ms N] [--single-connection] [--mutant NAME [--flaky FRACTION]]";

const fail = (message: string): never => {
  process.stderr.write(`reference bridge: ${message}\n${USAGE}\n`);
  process.exit(2);
};

const { values } = (() => {
  try {
    return parse();
  } catch (err) {
    return fail((err as Error).message);
  }
})();
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

function parse() {
  return parseArgs({
    options: {
      help: { type: "boolean", short: "h", default: false },
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "0" },
      "token-env": { type: "string", default: contract.defaults.tokenEnv },
      // Unset, the bridge's own defaults hold.
      "max-commands": { type: "string" },
      "max-events": { type: "string" },
      "drain-ms": { type: "string" },
      "single-connection": { type: "boolean", default: false },
      mutant: { type: "string" },
      // With --mutant: the fault acts on about this fraction of connections (0 to 1).
      flaky: { type: "string" },
    },
  });
}
const int = (name: string, min: number) => {
  const n = Number(values[name as keyof typeof values]);
  return Number.isSafeInteger(n) && n >= min ? n : fail(`--${name} must be a whole number >= ${min}`);
};
const host = values.host!;
if (!["127.0.0.1", "::1", "localhost"].includes(host)) fail("this bridge listens on loopback only");
const options: BridgeOptions = {
  host,
  port: int("port", 0),
  token: process.env[values["token-env"]!] ?? "",
  singleConnection: values["single-connection"],
};
if (values["max-commands"] !== undefined) options.maxQueuedCommands = int("max-commands", 1);
if (values["max-events"] !== undefined) options.maxEvents = int("max-events", 1);
if (values["drain-ms"] !== undefined) options.drainIntervalMs = int("drain-ms", 1);
const mutant = values.mutant ? mutants.find((m) => m.name === values.mutant) : undefined;
if (values.mutant && !mutant)
  fail(`no mutant named "${values.mutant}"; there are: ${mutants.map((m) => m.name).join(", ")}`);
const fraction = values.flaky === undefined ? undefined : Number(values.flaky);
if (fraction !== undefined && !(mutant && fraction >= 0 && fraction <= 1))
  fail("--flaky takes a fraction from 0 to 1, with --mutant");
const chosen = mutant && fraction !== undefined ? flaky(mutant, fraction) : mutant;
const bridge: ReferenceBridge = chosen ? chosen.create(options) : new ReferenceBridge(options);
const address = await bridge.listen();
process.stdout.write(`AICONTROL_BRIDGE_READY ${JSON.stringify(address)}\n`);
const stop = () => void bridge.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
