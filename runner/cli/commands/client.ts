// aicontrol-conformance client --exec CMD: the tool plays a hostile bridge for a client.
import { contract as shipped } from "../../../protocol/contract.js";
import type { Reporter } from "../../../reports/types.js";
import { clientUnstarted, runClientMode } from "../../client.js";
import { checkWritable, reportOutputs } from "../../outputs.js";
import { readContract } from "../inputs.js";
import { OPTIONS, PROFILES, type Profile } from "../options/table.js";
import { UsageError } from "../options/value.js";
import { type Deps, EXIT, type Io, type Outcome, type Values, verdictCode } from "../outcome.js";
import { ruleSelector } from "../rules.js";

/** Client mode: the tool plays a hostile bridge for the command given with --exec. */
export async function clientCommand(
  values: Values,
  rest: string[],
  io: Io,
  deps: Deps,
  reporters: () => Reporter[],
): Promise<Outcome> {
  if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}" after "client"`);
  if (!values.exec)
    throw new UsageError('client mode needs the client command: client --exec "CMD {host} {port} {timeout}"');
  if (values.endpoint || values.spawn) throw new UsageError("client mode takes --exec, not --endpoint or --spawn");
  const contract = values.contract ? readContract(values.contract) : shipped;
  const outputs = reportOutputs(values);
  checkWritable(outputs);
  const report = await runClientMode({
    contract,
    command: values.exec,
    clientTimeoutMs: values.clientTimeout ?? 1000,
    seed: values.seed ?? Math.floor(Math.random() * 2 ** 31),
    runs: values.runs ?? PROFILES[(values.profile ?? OPTIONS.profile.default) as Profile],
    strict: values.strict ?? false,
    recheck: values.recheck,
    selected: ruleSelector(values.rules ?? [], values.skip ?? [], contract),
    env: io.env,
    reporters: reporters(),
    log: (line) => io.err(`${line}\n`),
    signal: deps.signal,
  });
  if (deps.signal?.aborted) return { code: EXIT.interrupted, report };
  if (clientUnstarted(report)) return { code: EXIT.unreachable, report };
  return { code: verdictCode(report, undefined, contract, io.out, values.allowUncovered), report };
}
