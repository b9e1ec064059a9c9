import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { contract } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import { applyBaseline, baselineOf, loadBaseline } from "../runner/baseline.js";
import { allChecks } from "../suites/index.js";
import { cli, TEST_TOKEN } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "aicc-write-baseline-"));
const env = { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN };
const spawn = "node dist/bridges/reference/cli.js --mutant lenient-json";
const run = ["--spawn", spawn, "--rules", "error.parse,method.ping", "--profile", "quick", "--recheck", "1"];

describe("--write-baseline", () => {
  it("writes a run's failures as a baseline --baseline reads, dated, and a run with it passes", async () => {
    const file = join(dir, "baseline.yaml");
    const json = join(dir, "run.json");
    const first = await cli([...run, "--json", json, "--write-baseline", file, "--baseline-until", "2027-03-01"], env);
    expect(first.code).toBe(1);
    const failing = [
      ...new Set(
        (JSON.parse(readFileSync(json, "utf8")) as Report).rules
          .flatMap((r) => r.checks)
          .filter((c) => c.verdict === "fail")
          .map((c) => c.id),
      ),
    ];
    expect(first.err).toContain(`wrote ${failing.length} baseline entr`);
    const written = parse(readFileSync(file, "utf8")) as { "known-failures": { check: string; until: string }[] };
    expect(written["known-failures"].map((e) => e.check).sort()).toEqual(failing.sort());
    expect(written["known-failures"].every((e) => e.until === "2027-03-01")).toBe(true);
    expect(readFileSync(file, "utf8")).toContain(`# Known failures of ${spawn}`);
    const again = await cli([...run, "--baseline", file], env);
    expect(again.code, again.out).toBe(0);
    expect(again.out).toMatch(/\b1 known\b/);
  });

  it("writes what still fails in a --replay of a report, until 90 days from today by default", async () => {
    const json = join(dir, "replayed.json");
    expect((await cli([...run, "--json", json], env)).code).toBe(1);
    const file = join(dir, "replayed.yaml");
    const r = await cli(["--replay", json, "--write-baseline", file], env);
    expect(r.code).toBe(1);
    const text = readFileSync(file, "utf8");
    const day = new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
    expect(text).toContain(`until: ${day}`);
    expect(text).toContain(`in a replay of ${json}`);
    expect(loadBaseline(file, contract, allChecks).entries.length).toBeGreaterThan(0);
  });

  it("lists a failure graded flaky as known-flaky and a failing rule without a failing check by its rule ID", () => {
    const report = {
      seed: 4,
      startedAt: "2026-12-01T00:00:00.000Z",
      target: { kind: "bridge", endpoint: "127.0.0.1:9" },
      rules: [
        {
          id: `${contract.prefix}.error.parse`,
          verdict: "fail",
          checks: [
            {
              id: "error.parse/non-json",
              verdict: "fail",
              message: "not rejected\nmore",
              reproduced: { grade: "flaky" },
            },
          ],
        },
        { id: `${contract.prefix}.method.ping`, verdict: "error", reason: "no verdict", checks: [] },
      ],
    } as unknown as Report;
    const { text, entries } = baselineOf(report, "2027-01-01", "failed in a test");
    expect(entries).toBe(2);
    expect(parse(text)).toEqual({
      "known-failures": [
        {
          rule: `${contract.prefix}.method.ping`,
          reason: "no verdict (failed in a test, seed 4)",
          until: "2027-01-01",
        },
      ],
      "known-flaky": [
        { check: "error.parse/non-json", reason: "not rejected (failed in a test, seed 4)", until: "2027-01-01" },
      ],
    });
    const file = join(dir, "synthetic.yaml");
    writeFileSync(file, text);
    const outcome = applyBaseline(report, loadBaseline(file, contract, allChecks), contract.prefix, "2026-12-02");
    expect(outcome.unexpected).toEqual([]);
  });

  it("takes --baseline-until only as a date, and only with --write-baseline", async () => {
    expect((await cli(["--baseline-until", "2027-01-01"])).err).toContain(
      "--baseline-until dates the entries --write-baseline FILE writes: give it too",
    );
    expect((await cli(["--write-baseline", join(dir, "x.yaml"), "--baseline-until", "soon"])).err).toContain(
      '--baseline-until must be a date such as 2027-03-01, not "soon"',
    );
  });
});
