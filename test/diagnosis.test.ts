import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import type { Report } from "../reports/types.js";
import { cli, limiter, readReport, TEST_TOKEN } from "./helpers.js";

// Whole runs at an endpoint (nothing is restarted): one fault makes the bridge stop doing one
// thing, and the run must name that fault once, on its own rule, and judge what it still can.

const dir = mkdtempSync(join(tmpdir(), "aicc-diagnosis-"));
const env = { FONLINE_AI_TOKEN: TEST_TOKEN };
let runs = 0;

/** A whole quick run at the endpoint: its report, exit code and stderr. */
async function runAt(port: number, extra: string[] = []) {
  const json = join(dir, `run-${++runs}.json`);
  const args = ["--endpoint", `127.0.0.1:${port}`, "--profile", "quick", "--seed", "4", "--timeout", "400ms"];
  const r = await cli([...args, ...extra, "--json", json], env);
  return { report: readReport(json), code: r.code, err: r.err };
}

/** Whole runs at a time: each has its own bridge, and a run mostly waits on its replies and game loop. */
const slot = limiter(3);

async function wholeRun(bridge: ReferenceBridge, before?: (port: number) => Promise<void>): Promise<Report> {
  return slot(() => wholeRunNow(bridge, before));
}

async function wholeRunNow(bridge: ReferenceBridge, before?: (port: number) => Promise<void>): Promise<Report> {
  const { port } = await bridge.listen();
  try {
    await before?.(port);
    const r = await runAt(port, ["--recheck", "0"]);
    expect(r.code, r.err).toBe(1);
    return r.report;
  } finally {
    await bridge.close();
  }
}

const make = (name: string) =>
  mutants.find((m) => m.name === name)!.create({ token: TEST_TOKEN, maxEvents: 40, maxQueuedCommands: 8 });
const failing = (report: Report) =>
  report.rules.filter((r) => r.verdict === "fail").map((r) => r.id.split(".").slice(1).join("."));
const unjudged = (report: Report) => report.rules.filter((r) => r.verdict === "error").map((r) => r.id);

describe.concurrent("one fault, named once on its own rule", { timeout: 120_000 }, () => {
  it("a command type that never completes fails integration.command-completion, naming it, and stops nothing", async () => {
    const report = await wholeRun(make("silent-unknown-types"));
    expect(failing(report)).toContain("integration.command-completion");
    const completion = report.rules.find((r) => r.id.endsWith("integration.command-completion"))!;
    expect(completion.checks.find((c) => c.verdict === "fail")!.message).toMatch(/"type":"/);
    expect(report.stopped).toBeUndefined();
    expect(unjudged(report)).toEqual([]);
  });

  it("a full queue answered with the wrong code fails error.queue-full, and the bridge is not taken for dead", async () => {
    const report = await wholeRun(make("queue-full-wrong-code"));
    expect(failing(report)).toContain("error.queue-full");
    expect(report.stopped).toBeUndefined();
    expect(unjudged(report)).toEqual([]);
  });

  it("an events cursor read as a list index fails method.events, not command completion", async () => {
    const report = await wholeRun(make("cursor-as-index"));
    expect(failing(report)).toContain("method.events");
    expect(failing(report)).not.toContain("integration.command-completion");
    expect(report.stopped).toBeUndefined();
  });

  it("a queue slot leaked per failed command fails error.queue-full, not command completion", async () => {
    const report = await wholeRun(make("leaks-slot-on-failure"));
    expect(failing(report)).toContain("error.queue-full");
    expect(failing(report)).not.toContain("integration.command-completion");
  });

  it("a reply without its LF fails wire.ndjson", async () => {
    const report = await wholeRun(make("reply-without-lf"));
    expect(failing(report)).toEqual(["wire.ndjson"]);
    expect(report.rules.find((r) => r.id.endsWith("wire.ndjson"))!.checks[0]!.message).toMatch(/without the LF/);
  });

  it("a game loop killed before the run is named broken before the first check, not after one", async () => {
    const report = await wholeRun(make("drain-dies-on-ill-typed"), async (port) => {
      // The killing command, sent before the run: {"type":"move","x":""}.
      const { Connection } = await import("../suites/harness/connection.js");
      const conn = await Connection.open("127.0.0.1", port, { maxLineBytes: 1 << 20, connectTimeoutMs: 1000 });
      const line = (o: object) => `${JSON.stringify({ jsonrpc: "2.0", ...o })}\n`;
      conn.write(line({ id: 1, method: "auth", params: { token: TEST_TOKEN } }));
      await conn.read(1000);
      conn.write(line({ id: 2, method: "act", params: { type: "move", x: "" } }));
      await conn.read(1000);
      conn.close();
      await new Promise((r) => setTimeout(r, 50));
    });
    expect(report.stopped).toMatchObject({ duty: "completions", after: "preflight" });
    const preflight = report.rules
      .flatMap((r) => r.checks)
      .find((c) => c.id === "preflight/integration.command-completion");
    expect(preflight).toMatchObject({ verdict: "fail" });
    for (const check of report.rules.flatMap((r) => r.checks).filter((c) => c.verdict === "error"))
      expect(check.message).toMatch(/before the first check/);
  });
});

/** A game loop that starts late: here once a second command is queued, so the test does not rest on the machine's pace. */
class LateLoop extends ReferenceBridge {
  override startLoop(): void {
    const wait = setInterval(() => {
      if (this.queue.length < 2) return;
      clearInterval(wait);
      super.startLoop();
    }, 5);
    this.drainTimer = wait;
  }
}

describe("a completion the preflight missed once", () => {
  it("is looked for again: one that comes then is a warning, and the run goes on", async () => {
    const bridge = new LateLoop({ token: TEST_TOKEN, maxEvents: 40, maxQueuedCommands: 8 });
    const { port } = await bridge.listen();
    try {
      const { report, code, err } = await runAt(port, ["--recheck", "0"]);
      expect(report.stopped).toBeUndefined();
      const preflight = report.rules
        .flatMap((r) => r.checks)
        .find((c) => c.id === "preflight/integration.command-completion");
      expect(preflight).toMatchObject({
        verdict: "warn",
        reproduced: { tries: 1, failed: 0, grade: "not-reproduced" },
      });
      expect(unjudged(report)).toEqual([]);
      expect(code, err).toBe(0);
    } finally {
      await bridge.close();
    }
  });
});

describe("no check is judged by another's leftovers", () => {
  it("two runs against one bridge whose events pages outgrow the line give the same failing rules", async () => {
    const bridge = make("unbounded-event-pages");
    const { port } = await bridge.listen();
    try {
      const once = async () => (await runAt(port)).report;
      const first = await once();
      const second = await once();
      expect(failing(second)).toEqual(failing(first));
      for (const report of [first, second]) {
        const lineLimit = report.rules.find((r) => r.id.endsWith("wire.line-limit"))!;
        expect(lineLimit.checks.filter((c) => c.verdict === "fail").map((c) => c.id)).toEqual([
          "method.events/large-messages",
        ]);
      }
    } finally {
      await bridge.close();
    }
  });
});
