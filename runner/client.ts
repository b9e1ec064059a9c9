// Client mode: the tool listens on loopback, starts the client command per case, answers with
// the case's bytes, and judges what the client did.
import type { Contract, RuleId } from "../protocol/contract.js";
import type { Report, Reporter } from "../reports/types.js";

export interface ClientRunOptions {
  contract: Contract;
  /** The client command, with {host}, {port} and {timeout} to substitute. */
  command: string;
  clientTimeoutMs: number;
  seed: number;
  runs: number;
  strict: boolean;
  selected: (rule: RuleId) => boolean;
  env: NodeJS.ProcessEnv;
  reporters: Reporter[];
  log: (line: string) => void;
  signal?: AbortSignal;
}

export async function runClientMode(_options: ClientRunOptions): Promise<Report> {
  throw new Error("client mode is not built yet");
}
