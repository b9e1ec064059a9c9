import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import type { CheckReport, Report } from "../reports/types.js";
import { checksReplayedOnly, checksWithoutOracle } from "../runner/cli/options/no-oracle.js";
import { exportReproducers, planOf, reproducerName, scriptOf } from "../runner/export.js";
import { REDACTED } from "../suites/harness/redact.js";
import { cli, readReport, TEST_TOKEN } from "./helpers.js";

const hasPython = spawnSync("python3", ["--version"]).status === 0;
const root = mkdtempSync(join(tmpdir(), "aicc-export-"));
const env = { FONLINE_AI_TOKEN: TEST_TOKEN };
const OPTIONS = { contract, tokenEnv: "FONLINE_AI_TOKEN", tokenConfigured: true, timeoutMs: 500 };
const bridges: ReferenceBridge[] = [];
afterEach(async () => {
  while (bridges.length) await bridges.pop()!.close();
});

async function listening(bridge: ReferenceBridge): Promise<number> {
  bridges.push(bridge);
  return (await bridge.listen()).port;
}

/** Runs a reproducer (asynchronously: the bridges it talks to live in this process). */
function reproduce(file: string, port: number, environment: NodeJS.ProcessEnv = env) {
  return new Promise<{ code: number; out: string }>((resolve) => {
    execFile(
      "python3",
      [file, "--port", String(port), "--timeout", "0.5"],
      { env: { PATH: process.env.PATH, ...environment } },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? -1) : 0, out: stdout + stderr }),
    );
  });
}

/** Runs one check against a fresh instance of the mutant with --export; returns the script and the report. */
async function exported(name: string) {
  const mutant = mutants.find((m) => m.name === name)!;
  const dir = join(root, name);
  const json = join(root, `${name}.json`);
  const port = await listening(mutant.create({ token: TEST_TOKEN }));
  const run = await cli(
    ["--endpoint", `127.0.0.1:${port}`, "--profile", "quick", "--timeout", "500ms", "--check", mutant.check].concat([
      "--export",
      dir,
      "--json",
      json,
    ]),
    env,
  );
  expect(run.code, run.err).toBe(1);
  expect(run.err).toContain(`exported 1 reproducer(s) to ${dir}`);
  const report = readReport(json);
  const check = report.rules.flatMap((r) => r.checks).find((c) => c.id === mutant.check)!;
  expect(check.verdict).toBe("fail");
  expect(readdirSync(dir)).toEqual([reproducerName(mutant.check)]);
  return { mutant, file: join(dir, reproducerName(mutant.check)), check, report };
}

describe.skipIf(!hasPython)("--export DIR writes a standalone reproducer per failing check", () => {
  it.each([
    // A parse-error oracle, a token to send back, and the liveness probe after the case.
    ["lenient-json", "error.parse__non-json.py", "error"],
    // A pong oracle on a ping cut into TCP segments of their own: the script cuts it the same.
    ["segment-per-request", "wire.tcp-stream__split-writes.py", "result"],
    // A request of exactly the line limit: the report keeps its head and its filler as a run.
    ["limit-off-by-one", "wire.line-limit__exact-limit.py", "result"],
  ])("%s: the script exits 1 against the mutant and 0 against the reference bridge", async (name, file, oracle) => {
    const { mutant, file: path, check } = await exported(name);
    expect(reproducerName(mutant.check)).toBe(file);
    expect(check.oracle?.kind).toBe(oracle);
    const text = readFileSync(path, "utf8");
    expect(text).not.toContain(TEST_TOKEN);
    expect(text).toContain(`TOKEN_ENV = 'FONLINE_AI_TOKEN'`);
    expect(text).toContain(`JSONRPC = '${contract.jsonrpc}'`);

    const still = await reproduce(path, await listening(mutant.create({ token: TEST_TOKEN })));
    expect(still.code, still.out).toBe(1);
    expect(still.out).toContain("STILL BROKEN");
    expect(still.out).not.toContain(TEST_TOKEN);
    const fixed = await reproduce(path, await listening(new ReferenceBridge({ token: TEST_TOKEN })));
    expect(fixed.code, fixed.out).toBe(0);
    expect(fixed.out).toContain("BEHAVES");
  });

  it("waits where the check waited for a completion, so a bridge completing slower than the run's shows the same fault", async () => {
    // The check read its cursor once the first command had completed; a replay that read it before
    // would compare two cursors of an empty history and see nothing wrong.
    const { mutant, file } = await exported("event-seq-per-connection");
    expect(readFileSync(file, "utf8")).toContain("'waits': [[");
    const slow = { token: TEST_TOKEN, drainIntervalMs: 200 };
    const still = await reproduce(file, await listening(mutant.create(slow)));
    expect(still.code, still.out).toBe(1);
    expect(still.out).toContain("STILL BROKEN");
    const fixed = await reproduce(file, await listening(new ReferenceBridge(slow)));
    expect(fixed.code, fixed.out).toBe(0);
  });

  it("says it could not replay a flood whose queue never filled, rather than that the bridge behaves", async () => {
    const { file } = await exported("queue-never-full");
    const roomy = await reproduce(
      file,
      await listening(new ReferenceBridge({ token: TEST_TOKEN, maxQueuedCommands: 1000 })),
    );
    expect(roomy.code, roomy.out).toBe(2);
    expect(roomy.out).toContain("COULD NOT REPLAY: the queue never filled");
    expect(roomy.out).not.toContain("BEHAVES");
  });

  it("says it could not replay a queue count it never saw a command queued for, rather than that the bridge behaves", async () => {
    // A game loop that completes each command before its act is answered never shows a queued command: a status
    // read then says nothing of whether queuedCommands counts them, however late or early the script looks.
    const { file } = await exported("queued-always-zero");
    class Instant extends ReferenceBridge {
      protected override act(params: Parameters<ReferenceBridge["act"]>[0]) {
        const accepted = super.act(params);
        this.drainOne();
        return accepted;
      }
    }
    const instant = await reproduce(file, await listening(new Instant({ token: TEST_TOKEN })));
    expect(instant.code, instant.out).toBe(2);
    expect(instant.out).toContain("COULD NOT REPLAY: no status of");
    expect(instant.out).not.toContain("BEHAVES");
    // Where commands stay queued for a game loop's step, the same script still tells the broken count.
    const slow = { token: TEST_TOKEN, drainIntervalMs: 20 };
    const broken = await reproduce(
      file,
      await listening(mutants.find((m) => m.name === "queued-always-zero")!.create(slow)),
    );
    expect(broken.code, broken.out).toBe(1);
    const fixed = await reproduce(file, await listening(new ReferenceBridge(slow)));
    expect(fixed.code, fixed.out).toBe(0);
  });

  it("without an oracle, the same reply again exits 1 and a different one exits 3, both shown", async () => {
    // A failure recorded without an oracle (a check that has none): the replies are compared instead.
    const { mutant, check, report } = await exported("runs-unterminated-at-fin");
    expect(check.oracle).toEqual({ kind: "error", codes: [], orClose: true, orSilence: true });
    const bare = { ...check, oracle: undefined };
    const file = join(root, "no-oracle.py");
    writeFileSync(file, scriptOf(bare, planOf(bare, OPTIONS), [], report, OPTIONS));
    expect(readFileSync(file, "utf8")).toContain("{'op': 'half_close'}");
    const same = await reproduce(file, await listening(mutant.create({ token: TEST_TOKEN })));
    expect(same.code, same.out).toBe(1);
    expect(same.out).toContain("STILL BROKEN: the same reply as when the check failed");
    const changed = await reproduce(file, await listening(new ReferenceBridge({ token: TEST_TOKEN })));
    expect(changed.code, changed.out).toBe(3);
    expect(changed.out).toMatch(/now: +connection closed|now: +no response/);
    expect(changed.out).toMatch(/recorded: +\{"jsonrpc":"2.0","id":"unterminated","result":\{"ok":true\}\}/);
    expect(changed.out).toContain("CHANGED");
  });

  it("reads the token from the run's variable only: missing or refused, the script exits 2", async () => {
    const { file } = await exported("unknown-method-invalid-request");
    const port = await listening(new ReferenceBridge({ token: TEST_TOKEN }));
    const missing = await reproduce(file, port, {});
    expect(missing.code, missing.out).toBe(2);
    expect(missing.out).toContain("set FONLINE_AI_TOKEN");
    const wrong = await reproduce(file, port, { FONLINE_AI_TOKEN: `${TEST_TOKEN}-not` });
    expect(wrong.code, wrong.out).toBe(2);
    expect(wrong.out).toContain("did not authorize the token in FONLINE_AI_TOKEN");
    expect(wrong.out).not.toContain(TEST_TOKEN);
    expect((await reproduce(file, port)).code).toBe(0);
  });

  it("keeps writing to a peer that reads slowly, and gives up only on one that takes nothing for a timeout", () => {
    // A reader taking 4 KiB every 50 ms, and a timeout of 0.3 s: 64 KiB take over a second to write, none of it
    // a pause of a timeout. A bridge busy beside others reads so; a write bounded as a whole stopped short.
    const script = `
import socket, sys, threading, time
import reproducer
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
server.bind(("127.0.0.1", 0))
server.listen(1)
read = []
def serve(stall):
    conn, _ = server.accept()
    time.sleep(stall)
    while True:
        time.sleep(0.05)
        chunk = conn.recv(4096)
        if not chunk:
            break
        read.append(len(chunk))
stall = float(sys.argv[1])
threading.Thread(target=serve, args=(stall,), daemon=True).start()
peer = reproducer.Peer("127.0.0.1", server.getsockname()[1], 0.3)
peer.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
peer.write(b"x" * 65536, [], 0)
peer.sock.shutdown(socket.SHUT_WR)
time.sleep(0.3 + stall)
print(sum(read))
`;
    const written = (stall: number) =>
      Number(
        spawnSync("python3", ["-c", script, String(stall)], {
          // No bytecode written beside the runtime: the test leaves the tree as it found it.
          env: {
            PATH: process.env.PATH,
            PYTHONPATH: join(import.meta.dirname, "../runner"),
            PYTHONDONTWRITEBYTECODE: "1",
          },
          encoding: "utf8",
          timeout: 20_000,
        }).stdout.trim(),
      );
    expect(written(0)).toBe(65536);
    // A reader that takes nothing for longer than the timeout: the write stops.
    expect(written(1)).toBeLessThan(65536);
  });

  it("writes nothing where no check fails", async () => {
    const dir = join(root, "none");
    const port = await listening(new ReferenceBridge({ token: TEST_TOKEN }));
    const run = await cli(
      ["--endpoint", `127.0.0.1:${port}`, "--profile", "quick", "--check", "error.parse/non-json", "--export", dir],
      env,
    );
    expect(run.code, run.err).toBe(0);
    expect(existsSync(dir)).toBe(false);
  });

  it("a case the report keeps only in part is not exported: the check is named with the reason", () => {
    const send = (text: string) => ({ dir: "send" as const, t: 0, text, length: Buffer.byteLength(text) });
    const check: CheckReport = {
      id: "method.events/poll",
      verdict: "fail",
      message: "polled too long",
      transcript: [
        { dir: "event", t: 0, text: "connection 1 opened", length: 0 },
        send(`{"jsonrpc":"2.0","id":"auth","method":"auth","params":{"token":"${REDACTED}"}}\n`),
        { dir: "event", t: 1, text: "… 120 entries left out …", length: 0 },
        send(`{"jsonrpc":"2.0","id":9,"method":"events","params":{}}\n`),
      ],
    };
    const report = {
      target: { kind: "bridge", endpoint: "127.0.0.1:43011", spawned: false },
      rules: [{ id: "ai-control-protocol.method.events", checks: [check] }],
    } as unknown as Report;
    const dir = join(root, "partial");
    expect(exportReproducers(dir, report, OPTIONS)).toEqual({
      written: [],
      refused: [
        {
          check: "method.events/poll",
          reason: "the report keeps only the start and the end of this case's long exchange",
        },
      ],
    });
    expect(existsSync(dir)).toBe(false);
    // What came before the gap is whole: a failure judged there is still exported.
    const early = { ...check, oracle: { kind: "result" as const, at: "auth" } };
    expect(planOf(early, OPTIONS).unreproducible).toBeUndefined();
  });

  it("docs/reproducing.md lists exactly the checks replayed only, each with its reason", () => {
    const page = readFileSync(new URL("../docs/reproducing.md", import.meta.url), "utf8");
    const block = /<!-- checks replayed only:[^>]*-->\n([\s\S]*?)\n *<!-- end of checks replayed only -->/.exec(
      page,
    )?.[1];
    expect(block).toBe(
      checksReplayedOnly()
        .map((c) => `  - \`${c.id}\`: ${c.reason}`)
        .join("\n"),
    );
  });

  it("docs/reproducing.md lists exactly the checks without an oracle, each with its reason", () => {
    const page = readFileSync(new URL("../docs/reproducing.md", import.meta.url), "utf8");
    const block = /<!-- checks without an oracle:[^>]*-->\n([\s\S]*?)\n *<!-- end of checks without an oracle -->/.exec(
      page,
    )?.[1];
    const listed = checksWithoutOracle();
    const expected = listed.length
      ? listed.map((c) => `  - \`${c.id}\`: ${c.reason}`).join("\n")
      : "  - none: every check records the oracle it judged by";
    expect(block).toBe(expected);
  });
});
