// The leniency policy of the README ("What a conformant implementation may do"): one test per row, named as the
// row is, each judging a bridge (or client) that does exactly what the row describes.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import {
  type BridgeOptions,
  CODES,
  type JsonObject,
  ReferenceBridge,
  type Session,
} from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { allChecks } from "../suites/index.js";
import { runClientSuite, runSuite } from "./helpers.js";

const FAST: BridgeOptions = { maxEvents: 40, maxQueuedCommands: 16, drainIntervalMs: 2 };
const mutant = (name: string) => {
  const found = mutants.find((m) => m.name === name);
  if (!found) throw new Error(`no mutant ${name}`);
  return (token: string) => found.create({ token, ...FAST });
};

/** The verdict of one check, run alone at the quick profile against the bridge `make` builds. */
async function verdict(
  make: (token: string) => ReferenceBridge,
  check: string,
  strict = false,
): Promise<{ check: string; rule: string }> {
  const report = await runSuite(make, {
    checks: allChecks.filter((c) => c.id === check),
    timeoutMs: 400,
    profile: "quick",
    strict,
  });
  // The check's own rule (a check judging several rules is shown under each; the others may say where it stopped).
  const own = `${contract.prefix}.${allChecks.find((c) => c.id === check)!.rules[0]}`;
  const rule = report.rules.find((r) => r.id === own)!;
  const found = rule.checks.find((c) => c.id === check)!;
  return { check: found.verdict, rule: rule.verdict };
}

/** Accepts every command with a non-empty type, whatever its fields hold, and completes it. */
class AcceptsIllTyped extends ReferenceBridge {
  protected override commandProblem(command: JsonObject): string | undefined {
    return super.commandProblem({ type: command.type ?? null });
  }
}

/** Refuses the empty string as an identifier (as the project's own reading), and takes every other. */
class RefusesEmptyIds extends ReferenceBridge {
  protected override commandProblem(command: JsonObject): string | undefined {
    if (["targetId", "itemId", "auxId"].some((k) => command[k] === "")) return "an identifier is never empty here";
    return super.commandProblem(command);
  }
}

/** Refuses nesting deeper than 512 levels with a parse error, as a parser with a depth limit does. */
class DepthLimited extends ReferenceBridge {
  protected override parse(line: Buffer): unknown {
    let depth = 0;
    for (const b of line) {
      if (b === 0x5b || b === 0x7b) depth++;
      else if (b === 0x5d || b === 0x7d) depth--;
      if (depth > 512) throw new RangeError("nested too deeply");
    }
    return super.parse(line);
  }
}

/** Closes the connection, without a reply, on malformed UTF-8. */
class ClosesOnMalformedUtf8 extends ReferenceBridge {
  protected override handleFrame(session: Session, line: Buffer, terminated: boolean): boolean {
    try {
      new TextDecoder("utf-8", { fatal: true }).decode(line);
    } catch {
      this.hangUp(session.socket);
      return false;
    }
    return super.handleFrame(session, line, terminated);
  }
}

const CLIENT = "node dist/bridges/clients/reference.js --host {host} --port {port} --timeout {timeout}";
async function clientVerdict(command: string, check: string): Promise<string | undefined> {
  const report = await runClientSuite(command, { onlyChecks: new Set([check]) });
  return report.rules.flatMap((r) => r.checks).find((c) => c.id === check)?.verdict;
}

const hasPython = spawnSync("python3", ["--version"]).status === 0;
/**
 * A small client of its own for the session rows: auth first where the token variable is set, then
 * the request; "tail" refuses bytes that follow its reply, "retry" tries a full queue twice more.
 */
const SESSION_CLIENT = `
import json, os, socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = socket.create_connection((host, port), timeout=1)
buf = b""
def call(i, method, params):
    global buf
    s.sendall(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}).encode() + b"\\n")
    while b"\\n" not in buf:
        d = s.recv(65536)
        if not d: raise SystemExit(3)
        buf += d
    line, _, buf = buf.partition(b"\\n")
    return json.loads(line)
def out(kind, code):
    print("AICONTROL_OUTCOME " + json.dumps({"kind": kind})); sys.exit(code)
token = os.environ.get("FONLINE_AI_TOKEN")
if token and call(1, "auth", {"token": token})["result"]["authorized"] is not True: out("rejected", 3)
for attempt in range(3):
    reply = call(2 + attempt, "ping", {})
    if mode == "tail":
        time.sleep(0.05)
        s.setblocking(False)
        try: buf += s.recv(65536)
        except BlockingIOError: pass
        if buf: out("rejected", 3)
    if "error" in reply and reply["error"]["code"] == -32002 and mode == "retry" and attempt < 2:
        time.sleep(0.05); continue
    out("remote-error", 1) if "error" in reply else out("result", 0)
`;
const sessionClient = (mode: "tail" | "retry") => {
  const file = join(mkdtempSync(join(tmpdir(), "session-client-")), "client.py");
  writeFileSync(file, SESSION_CLIENT);
  return `python3 ${file} ${mode} {host} {port}`;
};

describe("what a conformant implementation may do", () => {
  it("a numeric id echoed as its nearest double warns, and fails under --strict", async () => {
    expect(await verdict(mutant("id-nearest-double"), "wire.response-envelope/precise-id")).toEqual({
      check: "warn",
      rule: "warn",
    });
    expect((await verdict(mutant("id-nearest-double"), "wire.response-envelope/precise-id", true)).rule).toBe("fail");
  });

  it("a numeric id no double holds, refused as a parse error with id null, warns", async () => {
    expect((await verdict(mutant("refuses-out-of-range-ids"), "wire.response-envelope/precise-id")).check).toBe("warn");
  });

  it("a numeric id echoed as another value, truncated, or as a string fails", async () => {
    for (const name of ["id-through-double", "id-truncated", "id-digits-as-string"])
      expect((await verdict(mutant(name), "wire.response-envelope/precise-id")).check, name).toBe("fail");
  });

  it("a BOM before a request, ignored by a bridge, warns", async () => {
    expect((await verdict(mutant("ignores-bom"), "error.parse/non-json")).check).toBe("warn");
  });

  it("a BOM before a reply, accepted by a client, warns; a CR before the LF, accepted by a client, passes", async () => {
    expect(await clientVerdict(`${CLIENT} --mutant strips-bom ping`, "wire.ndjson/bom-reply")).toBe("warn");
    expect(await clientVerdict(`${CLIENT} ping`, "wire.ndjson/crlf-reply")).toBe("pass");
    expect(await clientVerdict(`${CLIENT} --mutant rejects-cr-before-lf ping`, "wire.ndjson/crlf-reply")).toBe("fail");
  }, 30_000);

  it.skipIf(!hasPython)(
    "a client refuses lines after its reply in one write; taking a later one fails",
    async () => {
      expect(await clientVerdict(sessionClient("tail"), "wire.ndjson/lines-in-one-write")).toBe("pass");
      expect(await clientVerdict(`${CLIENT} ping`, "wire.ndjson/lines-in-one-write")).toBe("pass");
      expect(await clientVerdict(`${CLIENT} --mutant last-line-of-read ping`, "wire.ndjson/lines-in-one-write")).toBe(
        "fail",
      );
    },
    30_000,
  );

  it.skipIf(!hasPython)(
    "a client retries a full queue, then reports it; retrying until it times out fails",
    async () => {
      expect(await clientVerdict(sessionClient("retry"), "wire.response-envelope/queue-full")).toBe("pass");
      expect(
        await clientVerdict(`${CLIENT} --mutant retries-queue-full ping`, "wire.response-envelope/queue-full"),
      ).toBe("fail");
    },
    30_000,
  );

  it("a CR before the LF of a request is served by a bridge, and counted in the line limit", async () => {
    expect(
      (await verdict((token) => new ReferenceBridge({ token }), "wire.line-limit/bytes-not-characters")).check,
    ).toBe("pass");
    expect((await verdict(mutant("limit-without-cr"), "wire.line-limit/bytes-not-characters")).check).toBe("fail");
  });

  it("ill-typed command values rejected, or accepted and completed, pass", async () => {
    for (const check of ["command.x/typed", "command.append/typed", "command.target-id/typed"]) {
      expect((await verdict((token) => new ReferenceBridge({ token, ...FAST }), check)).check, check).toBe("pass");
      expect((await verdict((token) => new AcceptsIllTyped({ token, ...FAST }), check)).check, check).toBe("pass");
    }
    expect((await verdict(mutant("silent-on-ill-typed-x"), "command.x/typed")).check).toBe("fail");
  });

  it('project identifiers of any string or integer, "" included, pass, accepted or refused', async () => {
    for (const check of ["command.target-id/typed", "command.item-id/typed", "command.aux-id/typed"]) {
      // The reference takes "" as it takes any string.
      expect((await verdict((token) => new ReferenceBridge({ token, ...FAST }), check)).check, check).toBe("pass");
      expect((await verdict((token) => new RefusesEmptyIds({ token, ...FAST }), check)).check, check).toBe("pass");
    }
  });

  it("an unknown method before auth fails error.unauthorized unless answered -32001", async () => {
    for (const check of ["error.unauthorized/before-auth", "error.unauthorized/precedence"]) {
      expect((await verdict((token) => new ReferenceBridge({ token }), check)).check, check).toBe("pass");
      expect((await verdict(mutant("unknown-method-before-auth-not-found"), check)).check, check).toBe("fail");
    }
    expect(CODES.unauthorized).toBe(-32001);
  });

  it("nesting deeper than the parser's limit: -32700 passes, closing without a reply warns, dying fails", async () => {
    expect((await verdict((token) => new DepthLimited({ token }), "error.parse/deep-nesting")).check).toBe("pass");
    expect((await verdict(mutant("closes-on-deep-nesting"), "error.parse/deep-nesting")).check).toBe("warn");
    expect((await verdict(mutant("dies-on-deep-nesting"), "error.parse/deep-nesting")).check).toBe("fail");
  });

  it("malformed UTF-8 answered with -32700 or by closing the connection passes", async () => {
    expect((await verdict((token) => new ReferenceBridge({ token }), "wire.utf8/malformed")).check).toBe("pass");
    expect((await verdict((token) => new ClosesOnMalformedUtf8({ token }), "wire.utf8/malformed")).check).toBe("pass");
  });

  it.skipIf(spawnSync("python3", ["--version"]).status !== 0)(
    "a bridge whose parser reads numbers into doubles (Python's json) warns only on precise ids: see python-bridge.test.ts",
    () => {
      expect(
        spawnSync("python3", ["-c", "import json; print(json.dumps(json.loads('3.141592653589793238462643383279')))"], {
          encoding: "utf8",
        }).stdout.trim(),
      ).toBe("3.141592653589793");
    },
  );
});

it("every row of the README's policy table names a test of this file", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("## What a conformant implementation may do"));
  const rows = section
    .slice(0, section.indexOf("\n\n", section.indexOf("| ---")))
    .split("\n")
    .filter((l) => l.startsWith("| ") && !l.startsWith("| ---") && !l.startsWith("| what"));
  expect(rows.length).toBeGreaterThanOrEqual(10);
  const source = readFileSync(new URL(import.meta.url), "utf8");
  for (const row of rows) {
    const name = row.split("|").at(-2)!.trim();
    // A row whose test needs Python names it in an it.skipIf(!hasPython)(...) that says so when skipped.
    const named = [`it("${name}"`, `it('${name}'`, `it.skipIf(!hasPython)(\n    "${name}"`];
    expect(
      named.some((n) => source.includes(n)),
      name,
    ).toBe(true);
  }
});
