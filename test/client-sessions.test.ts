// Client mode's sessions against the clients that must pass them: the reference client (with and
// without a token to authorize with), and the FOnline reference client, run from the copy of its
// public repository named by FONLINE_DIR (its code is never copied here; without it, skipped).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import { checks as sessions } from "../suites/client/sessions.js";
import { runClientSuite } from "./helpers.js";

const REFERENCE = "node dist/bridges/clients/reference.js --host {host} --port {port} --timeout {timeout}";
const fonlineClient = process.env.FONLINE_DIR ? join(process.env.FONLINE_DIR, "BuildTools/ai_control_client.py") : "";
const missing = !fonlineClient
  ? "FONLINE_DIR is not set"
  : existsSync(fonlineClient)
    ? ""
    : `no BuildTools/ai_control_client.py under ${process.env.FONLINE_DIR}`;

async function verdicts(command: string): Promise<Record<string, [string, string]>> {
  const report = await runClientSuite(command, { recheck: 1, onlyChecks: new Set(sessions.map((c) => c.id)) });
  const checks = report.rules.flatMap((r) => r.checks);
  return Object.fromEntries(
    sessions.map((s) => {
      const c = checks.find((x) => x.id === s.id)!;
      return [s.id, [c.verdict, c.message]];
    }),
  );
}

const REAUTH = "validation.security/reauth-after-reconnect";
const FOLLOW = "method.events/follow-pages";
/** Every verdict but those of the checks named. */
const others = (v: Record<string, [string, string]>, ...except: string[]) =>
  Object.entries(v)
    .filter(([id]) => !except.includes(id))
    .map(([id, [verdict]]) => [id, verdict]);

describe("client sessions", () => {
  it("the reference client that authorizes, reconnects once and follows events pages passes every one", async () => {
    const v = await verdicts(
      `${REFERENCE} --token-env ${contract.defaults.tokenEnv} --retries 1 --follow events '{"limit":5}'`,
    );
    expect(Object.values(v).map(([verdict]) => verdict)).toEqual(sessions.map(() => "pass"));
    expect(v[REAUTH]![1]).toBe("authorized each of 2 connections before its request");
    expect(v[FOLLOW]![1]).toBe("followed 3 pages, each from the last seq of the page before, up to seq 13");
  }, 30_000);

  it("a client given no token leaves re-authorization unobserved, and passes the rest", async () => {
    const v = await verdicts(`${REFERENCE} ping`);
    expect(v[REAUTH]).toEqual([
      "skip",
      `the client sent no auth request with a token in ${contract.defaults.tokenEnv}`,
    ]);
    expect(v[FOLLOW]).toEqual(["skip", "the client command does not read events"]);
    for (const [id, verdict] of others(v, REAUTH, FOLLOW)) expect(verdict, id).toBe("pass");
  }, 30_000);

  it("a client that authorizes but does not reconnect leaves re-authorization unobserved", async () => {
    const v = await verdicts(`${REFERENCE} --token-env ${contract.defaults.tokenEnv} events '{"limit":5}'`);
    expect(v[REAUTH]![0]).toBe("skip");
    expect(v[REAUTH]![1]).toMatch(/did not reconnect/);
    // Nor, without --follow, does it ask for a second page.
    expect(v[FOLLOW]![0]).toBe("skip");
    expect(v[FOLLOW]![1]).toMatch(/did not ask for the next/);
    for (const [id, verdict] of others(v, REAUTH, FOLLOW)) expect(verdict, id).toBe("pass");
  }, 30_000);
});

describe.skipIf(missing !== "")(`the FOnline reference client${missing ? ` (skipped: ${missing})` : ""}`, () => {
  // It authorizes with the token in FONLINE_AI_TOKEN on its one connection, never reconnects, and reads one page.
  for (const command of ["ping", "act --type move --x 1", "events --limit 5"]) {
    it(`passes every session it can be asked to play (${command}); re-authorization and paging are not observed`, async () => {
      const v = await verdicts(`python3 ${fonlineClient} --host {host} --port {port} --timeout {timeout} ${command}`);
      expect(v[REAUTH]![0]).toBe("skip");
      expect(v[REAUTH]![1]).toMatch(/did not reconnect/);
      expect(v[FOLLOW]![0]).toBe("skip");
      for (const [id, verdict] of others(v, REAUTH, FOLLOW)) expect(verdict, id).toBe("pass");
    }, 30_000);
  }
});
