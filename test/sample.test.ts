import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { sampleDir } from "../bench/sample.js";
import { cli, readReport, verdictOf, verdicts } from "./helpers.js";

// The FOnline sample bridge (public repository cvet/fonline, Examples/AiControlSample), run from a copy of that
// repository named by FONLINE_DIR; its code is never copied here. Without it these tests are skipped, and say why.
const dir = sampleDir();
const missing = typeof dir === "string" ? "" : ` (skipped: ${dir.missing})`;
const out = mkdtempSync(join(tmpdir(), "aicc-sample-"));
const env = { ...process.env };
delete env.FONLINE_AI_TOKEN;

describe.skipIf(typeof dir !== "string")(`the FOnline sample bridge, spawned${missing}`, () => {
  const spawn = () => `python3 ${join(dir as string, "ai_control_sample.py")} --port 0`;

  // At standard, whose budget holds the history checks' fill of 512 events at the sample's pace many times over: at
  // quick that fill is about the budget, so whether they run would follow the pace measured, not the lanes.
  it("gives on three bridges side by side the verdicts and cases of one (--lanes)", async () => {
    const run = async (lanes: number) => {
      const json = join(out, `lanes-${lanes}.json`);
      await cli(
        ["--spawn", spawn(), "--profile", "standard", "--seed", "3", "--lanes", `${lanes}`, "--json", json],
        env,
      );
      return readReport(json);
    };
    const one = await run(1);
    const three = await run(3);
    expect(one.summary.fail).toBeGreaterThan(0);
    expect(three.time?.lanes?.count).toBe(3);
    expect(verdicts(three)).toEqual(verdicts(one));
  }, 120_000);

  it("fails its events pages over the line limit on wire.line-limit, reading each only up to the limit", async () => {
    const json = join(out, "large.json");
    const r = await cli(["--spawn", spawn(), "--check", "method.events/large-messages", "--json", json], env);
    expect(r.code).toBe(1);
    const report = readReport(json);
    expect(verdictOf(report, "wire.line-limit")).toBe("fail");
    const check = report.rules.flatMap((x) => x.checks).find((c) => c.id === "method.events/large-messages")!;
    expect(check.reproduced).toMatchObject({ grade: "consistent" });
    // The check and its three rechecks each make two completions of about 0.55 MiB and meet one page over the limit.
    // Read to their ends, and read again by every poll after them, those pages came to over a GiB.
    expect(report.wire!.bytesReceived).toBeLessThan(32 * 1_048_576);
  });
});
