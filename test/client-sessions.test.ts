// Client mode's sessions against the clients that must pass them: the reference client (with and
// without a token to authorize with), and the FOnline reference client, run from the copy of its
// public repository named by FONLINE_DIR (its code is never copied here; without it, skipped).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import { runClientMode } from "../runner/client.js";
import { checks as sessions } from "../suites/client/sessions.js";

const REFERENCE = "node dist/bridges/clients/reference.js --host {host} --port {port} --timeout {timeout}";
const fonlineClient = process.env.FONLINE_DIR ? join(process.env.FONLINE_DIR, "BuildTools/ai_control_client.py") : "";
const missing = !fonlineClient
  ? "FONLINE_DIR is not set"
  : existsSync(fonlineClient)
    ? ""
    : `no BuildTools/ai_control_client.py under ${process.env.FONLINE_DIR}`;

async function verdicts(command: string): Promise<Record<string, [string, string]>> {
  const report: Report = await runClientMode({
    contract,
    command,
    clientTimeoutMs: 1000,
    seed: 7,
    runs: 5,
    strict: false,
    selected: () => true,
    env: { PATH: process.env.PATH },
    reporters: [],
    log: () => {},
    recheck: 1,
    onlyChecks: new Set(sessions.map((c) => c.id)),
  });
  const checks = report.rules.flatMap((r) => r.checks);
  return Object.fromEntries(
    sessions.map((s) => {
      const c = checks.find((x) => x.id === s.id)!;
      return [s.id, [c.verdict, c.message]];
    }),
  );
}

const passes = (v: Record<string, [string, string]>, except: string) =>
  Object.entries(v)
    .filter(([id]) => id !== except)
    .map(([id, [verdict]]) => [id, verdict]);

const REAUTH = "validation.security/reauth-after-reconnect";

describe("client sessions", () => {
  it("the reference client that authorizes and reconnects once passes every one", async () => {
    const v = await verdicts(`${REFERENCE} --token-env ${contract.defaults.tokenEnv} --retries 1 ping`);
    expect(Object.values(v).map(([verdict]) => verdict)).toEqual(sessions.map(() => "pass"));
    expect(v[REAUTH]![1]).toBe("authorized each of 2 connections before its request");
  }, 30_000);

  it("a client given no token leaves re-authorization unobserved, and passes the rest", async () => {
    const v = await verdicts(`${REFERENCE} ping`);
    expect(v[REAUTH]).toEqual([
      "skip",
      `the client sent no auth request with a token in ${contract.defaults.tokenEnv}`,
    ]);
    for (const [id, verdict] of passes(v, REAUTH)) expect(verdict, id).toBe("pass");
  }, 30_000);

  it("a client that authorizes but does not reconnect leaves re-authorization unobserved", async () => {
    const v = await verdicts(`${REFERENCE} --token-env ${contract.defaults.tokenEnv} ping`);
    expect(v[REAUTH]![0]).toBe("skip");
    expect(v[REAUTH]![1]).toMatch(/did not reconnect/);
    for (const [id, verdict] of passes(v, REAUTH)) expect(verdict, id).toBe("pass");
  }, 30_000);
});

describe.skipIf(missing !== "")(`the FOnline reference client${missing ? ` (skipped: ${missing})` : ""}`, () => {
  // It authorizes with the token in FONLINE_AI_TOKEN on its one connection and never reconnects.
  for (const command of ["ping", "act --type move --x 1"]) {
    it(`passes every session it can be asked to play (${command}); re-authorization is not observed`, async () => {
      const v = await verdicts(`python3 ${fonlineClient} --host {host} --port {port} --timeout {timeout} ${command}`);
      expect(v[REAUTH]![0]).toBe("skip");
      expect(v[REAUTH]![1]).toMatch(/did not reconnect/);
      for (const [id, verdict] of passes(v, REAUTH)) expect(verdict, id).toBe("pass");
    }, 30_000);
  }
});
