// What a run against a bridge is asked, read from the option values: its seed, runs and limits,
// the exact cases it takes up, its token, and the bridge it goes to.
import { randomBytes } from "node:crypto";
import type { Contract } from "../../protocol/contract.js";
import type { Report } from "../../reports/types.js";
import { formatHostPort } from "../../suites/harness/connection.js";
import { redactor, STRONG_TOKEN_LENGTH } from "../../suites/harness/redact.js";
import type { Case } from "../attempt.js";
import { DEFAULT_LANES, OPTIONS, type OptionValues, PROFILES, type Profile } from "../cli/options/table.js";
import { UsageError } from "../cli/options/value.js";
import { corpusCases, loadCorpus } from "../corpus.js";
import { failingCases } from "../replay.js";
import { lastFailedSelection } from "../selection.js";
import {
  type BridgeFactory,
  embeddedTarget,
  endpointTarget,
  isLoopback,
  parseEndpoint,
  RemoteRefused,
  type SpawnOptions,
  spawnTarget,
  type Target,
  TargetError,
} from "../targets.js";
import type { CaseMode, RunConfig } from "./config.js";

type Values = Partial<OptionValues>;

/** What a run against a bridge is asked, from the option values (and the report it takes up again). */
export function runSettings(values: Values, contract: Contract, earlier: Report | undefined, builtIn: boolean) {
  const profile = (values.profile ?? OPTIONS.profile.default) as Profile;
  const runs = values.runs ?? earlier?.runs ?? PROFILES[profile];
  const seed = values.seed ?? earlier?.seed ?? Math.floor(Math.random() * 2 ** 31);
  const timeoutMs = values.timeout ?? OPTIONS.timeout.default;
  const tokenEnv = values.tokenEnv ?? contract.defaults.tokenEnv;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) {
    throw new UsageError("--token-env takes the name of an environment variable, not a value like that");
  }
  const endpoint = values.endpoint ? parseEndpoint(values.endpoint) : undefined;
  if (values.endpoint && !endpoint) {
    throw new UsageError(
      `--endpoint must be HOST:PORT with a port from 1 to 65535 (IPv6 as [::1]:PORT), not "${values.endpoint}"`,
    );
  }
  if (endpoint && values.spawn) throw new UsageError("give either --endpoint or --spawn, not both");
  if (endpoint && !isLoopback(endpoint.host) && !values.allowRemote)
    throw new UsageError(new RemoteRefused(endpoint.host).message);
  if (!endpoint && !values.spawn && !builtIn)
    throw new UsageError("give a target: --endpoint HOST:PORT or --spawn CMD");
  const shard = values.shard ? parseShard(values.shard) : undefined;
  if (values.replayPath && !values.path) throw new UsageError("--replay-path goes with --path (and one --check)");
  if (values.path && values.check?.length !== 1)
    throw new UsageError("--path replays one case: give exactly one --check ID with it");
  return { profile, runs, seed, timeoutMs, tokenEnv, endpoint, shard };
}

/** The exact cases a run takes up (a replay, --last-failed, --path, the corpus), and the checks it is limited to. */
export function chosenCases(values: Values, earlier: Report | undefined, seed: number, runs: number) {
  let cases = new Map<string, Case>();
  let onlyChecks = values.check?.length ? new Set(values.check) : undefined;
  if (values.replay) {
    cases = failingCases(earlier!, values.check);
    if (cases.size === 0) throw new UsageError("--replay: the report holds no failing case to replay");
    onlyChecks = new Set(cases.keys());
  } else if (values.lastFailed) {
    cases = failingCases(earlier!, undefined, ["fail"]);
    // The checks that failed or could not be judged, and no check that passed (within --check where given).
    const again = lastFailedSelection(earlier!).checks.filter((id) => onlyChecks?.has(id) ?? true);
    if (again.length) onlyChecks = new Set(again);
  } else if (values.path) {
    const replayPath = values.replayPath ? { replayPath: values.replayPath } : {};
    cases.set(values.check![0]!, { seed, path: values.path, ...replayPath, runs });
  } else if (values.saveFailures) cases = corpusCases(loadCorpus(values.saveFailures));
  const caseMode: CaseMode = values.replay || values.path ? "replay" : values.lastFailed ? "last-failed" : "corpus";
  return { cases, onlyChecks, caseMode };
}

/**
 * How --spawn starts the run's bridges: one set of options for the run's bridge and its lanes, so what one start
 * learns (whether each start listens on a port of its own) the others know.
 */
export function spawnOptions(values: Values, io: { env: NodeJS.ProcessEnv }): SpawnOptions {
  return { startTimeoutMs: values.startTimeout ?? 30_000, env: io.env, ports: new Set() };
}

/** The bridge a run goes to, or why it cannot be reached (the run then reports every rule unjudged). */
export async function openTarget(
  values: Values,
  settings: ReturnType<typeof runSettings>,
  token: string | undefined,
  io: { env: NodeJS.ProcessEnv; err: (text: string) => void; console?: boolean },
  spawning: SpawnOptions,
  builtIn?: BridgeFactory,
) {
  const { endpoint, timeoutMs } = settings;
  let target: Target | undefined;
  let unreachable: string | undefined;
  try {
    if (endpoint) {
      const waitMs = values.waitForEndpoint;
      target = await endpointTarget(endpoint.host, endpoint.port, {
        timeoutMs,
        waitMs,
        allowRemote: values.allowRemote,
      });
    } else if (values.spawn) {
      target = await spawnTarget(values.spawn, spawning);
      if (!isLoopback(target.host) && !values.allowRemote) {
        await target.stop();
        throw new UsageError(`the spawned bridge listens on ${target.host}: ${new RemoteRefused(target.host).message}`);
      }
    } else target = await embeddedTarget(builtIn!, token);
  } catch (err) {
    if (!(err instanceof TargetError)) throw err;
    unreachable = redactor(token).text(err.message);
    // The console says it once, as the run's root cause; without it (the API), it is said here.
    if (io.console === false) io.err(`aicontrol-conformance: target unreachable: ${unreachable}\n`);
  }
  const command = values.spawn ? { command: values.spawn } : {};
  const where = endpoint
    ? formatHostPort(endpoint.host, endpoint.port)
    : values.spawn
      ? `spawn: ${values.spawn}`
      : "built-in";
  const targetInfo = target
    ? { endpoint: target.endpoint, spawned: target.spawned, label: target.label, ...command }
    : { endpoint: where, spawned: !endpoint, label: "unreachable" };
  return { target, unreachable, targetInfo: redactor(token).deep(targetInfo) };
}

/**
 * The further bridges of a run with --spawn (--lanes): the same command started again, on a port of its own. An
 * endpoint is one bridge, and the built-in one is this process's own work, which more of it would not hasten.
 */
export function laneBridges(values: Values, spawning: SpawnOptions): RunConfig["lanes"] {
  const command = values.spawn;
  if (!command || values.endpoint) return undefined;
  return {
    count: values.lanes ?? DEFAULT_LANES,
    // Asked for by number, lanes are started whatever the pace; by default only where they pay.
    paced: values.lanes === undefined,
    open: async () => {
      const target = await spawnTarget(command, spawning);
      if (isLoopback(target.host) || values.allowRemote) return target;
      await target.stop();
      throw new TargetError(`it listens on ${target.host}, not on a loopback address`);
    },
  };
}

/** The token a run authorizes with: the environment's, or for the built-in bridge one of its own. */
export function runToken(
  values: Values,
  tokenEnv: string,
  io: { env: NodeJS.ProcessEnv; err: (text: string) => void; console?: boolean },
): string | undefined {
  const builtIn = !values.endpoint && !values.spawn;
  // The built-in bridge gets a token of its own, so a plain `npm start` exercises authorization too.
  const token = io.env[tokenEnv] || (builtIn ? randomBytes(12).toString("hex") : undefined);
  if (token && token.length < STRONG_TOKEN_LENGTH && !builtIn) {
    io.err(
      `aicontrol-conformance: warning: the token in ${tokenEnv} is under ${STRONG_TOKEN_LENGTH} characters, which is weak; it is redacted where it stands alone\n`,
    );
  }
  return token;
}

function parseShard(text: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(text);
  const [index, count] = m ? [Number(m[1]), Number(m[2])] : [0, 0];
  if (!m || count < 1 || index < 1 || index > count)
    throw new UsageError(`--shard takes I/N with 1 <= I <= N, e.g. 2/4, not "${text}"`);
  return { index, count };
}
