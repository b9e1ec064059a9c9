#!/usr/bin/env node
// The reference AiControl client: one request, one response, judged strictly. It refuses an
// invalid timeout and a non-loopback host before connecting, bounds the whole request with one
// deadline, and rejects every reply that is not exactly one valid response to its request.
//
//   node dist/bridges/clients/reference.js --host H --port P --timeout SECONDS [--allow-remote]
//       [--token-env NAME] [--retries N] [--follow] METHOD [PARAMS]
//
// With --token-env, where that variable holds a token, every connection sends `auth` before the
// request. With --retries, a connection that ends without a reply is made again, up to N times,
// within the same timeout. With --follow, `events` reads page after page until caught up.
// Prints `AICONTROL_OUTCOME {"kind":...}` on stdout (result, remote-error or rejected), then the
// result or error as JSON. Exit status: 0 result, 1 remote error, 2 bad usage (nothing sent),
// 3 the reply was rejected or none came in time. `--mutant NAME` runs a deliberately broken client.
import { pathToFileURL } from "node:url";
import { type CallArgs, FACTS, isObject, type Outcome, ReferenceClient, UsageError } from "./client.js";

export { type CallArgs, FACTS, type Outcome, ReferenceClient, UsageError } from "./client.js";

export function parseCommandLine(argv: string[], env: NodeJS.ProcessEnv): CallArgs & { mutant?: string } {
  const flags: Record<string, string> = {};
  const rest: string[] = [];
  let allowRemote = false;
  let follow = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--allow-remote") allowRemote = true;
    else if (arg === "--follow") follow = true;
    else if (["--host", "--port", "--timeout", "--mutant", "--token-env", "--retries"].includes(arg)) {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      flags[arg.slice(2)] = value;
    } else if (arg.startsWith("--")) throw new UsageError(`unknown option ${arg}`);
    else rest.push(arg);
  }
  const [method, params = "{}"] = rest;
  if (!method) throw new UsageError("give the method to call, e.g. ping");
  let parsed: unknown;
  try {
    parsed = JSON.parse(params);
  } catch {
    parsed = undefined;
  }
  if (!isObject(parsed)) throw new UsageError("the params must be a JSON object");
  const port = Number(flags.port ?? env.AICONTROL_PORT ?? FACTS.port);
  const retries = Number(flags.retries ?? 0);
  if (!Number.isInteger(retries) || retries < 0) throw new UsageError("--retries must be a whole number");
  const token = flags["token-env"] ? env[flags["token-env"]] : undefined;
  return {
    host: flags.host ?? env.AICONTROL_HOST ?? FACTS.host,
    port,
    timeout: flags.timeout ?? "5",
    method,
    params: parsed,
    allowRemote,
    retries,
    follow,
    ...(token ? { token } : {}),
    ...(flags.mutant ? { mutant: flags.mutant } : {}),
  };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let outcome: Outcome;
  try {
    const args = parseCommandLine(argv, env);
    let client = new ReferenceClient();
    if (args.mutant) {
      const { clientMutants } = await import("./mutants.js");
      const mutant = clientMutants.find((m) => m.name === args.mutant);
      if (!mutant)
        throw new UsageError(
          `no mutant named "${args.mutant}"; there are: ${clientMutants.map((m) => m.name).join(", ")}`,
        );
      client = mutant.create();
    }
    outcome = await client.call(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`reference client: ${err.message}\n`);
    return 2;
  }
  process.stdout.write(`AICONTROL_OUTCOME ${JSON.stringify({ kind: outcome.kind })}\n`);
  if (outcome.kind === "result") {
    process.stdout.write(`${JSON.stringify(outcome.result)}\n`);
    return 0;
  }
  if (outcome.kind === "remote-error") {
    process.stdout.write(`${JSON.stringify(outcome.error)}\n`);
    return 1;
  }
  process.stderr.write(`reference client: rejected: ${outcome.reason}\n`);
  return 3;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main(process.argv.slice(2), process.env).then((code) => {
    // Flush stdout before leaving: the outcome line is what the caller reads.
    process.stdout.write("", () => process.exit(code));
  });
}
