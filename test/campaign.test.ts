import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCorpus } from "../runner/corpus.js";
import { cli, readReport, TEST_TOKEN } from "./helpers.js";

// A fuzzing campaign split over the jobs of a CI matrix: each job a part (--duration with its own
// seed, or --shard I/N), then one --merge of every part.

const dir = mkdtempSync(join(tmpdir(), "aicc-campaign-"));
const env = { ...process.env, FONLINE_AI_TOKEN: TEST_TOKEN };
const part = (seed: number, json: string) =>
  cli(
    [
      ...["--spawn", "node dist/bridges/reference/cli.js --mutant lenient-json", "--profile", "quick"],
      ...["--check", "validation.protocol-smoke/deep-states,error.parse/non-json", "--recheck", "0"],
      ...["--duration", "8s", "--seed", String(seed), "--json", json, "--save-failures", join(dir, `corpus-${seed}`)],
    ],
    env,
  );

describe("a campaign of 4 --duration parts merged", () => {
  it("reaches every cell any part reached, lists each failure once, counts each part's fuzzing, and merges the corpus", async () => {
    const files = [1, 2, 3, 4].map((seed) => join(dir, `part-${seed}.json`));
    const runs = await Promise.all(files.map((file, i) => part(i + 1, file)));
    for (const r of runs) expect(r.code, r.err).toBe(1);
    const parts = files.map(readReport);
    const corpus = join(dir, "corpus");
    const merged = await cli(["--merge", ...files, "--json", join(dir, "merged.json"), "--save-failures", corpus]);
    expect(merged.code, merged.err).toBe(1);
    const report = readReport(join(dir, "merged.json"));

    const reached = (r: (typeof parts)[number]) =>
      new Set(r.stateCoverage!.cells.filter((c) => c.reached).map((c) => c.id));
    const union = new Set(parts.flatMap((p) => [...reached(p)]));
    expect(reached(report)).toEqual(union);
    for (const p of parts) expect(report.stateCoverage!.reached).toBeGreaterThanOrEqual(p.stateCoverage!.reached);

    // Every part found the same failure: the merged report has it once, under each rule it covers.
    const failing = report.rules.flatMap((r) =>
      r.checks.filter((c) => c.verdict === "fail").map((c) => `${r.id} ${c.id}`),
    );
    expect(failing).toEqual([...new Set(failing)]);
    expect(failing.some((f) => f.endsWith(" error.parse/non-json"))).toBe(true);
    expect(merged.out.match(/^ {2}error\.parse\/non-json: /gm)).toHaveLength(1);

    expect(report.parts!.map((p) => [p.file, p.seed, p.rounds, p.checks])).toEqual(
      parts.map((p, i) => [files[i], p.seed, p.fuzz!.rounds, p.fuzz!.checks]),
    );
    expect(report.fuzz!.rounds).toBe(parts.reduce((t, p) => t + p.fuzz!.rounds, 0));
    expect(merged.out).toMatch(
      /^campaign of 4 parts: \d+ fuzzing rounds, \d+ check runs; state cells reached: \d+\/\d+$/m,
    );
    expect(loadCorpus(corpus).map((c) => c.check)).toContain("error.parse/non-json");
    expect(readdirSync(corpus).length).toBeGreaterThan(0);
  });

  it("refuses two parts of one seed, which fuzz the same cases", async () => {
    const file = join(dir, "part-1.json");
    const r = await cli(["--merge", file, file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("the parts of a campaign run with distinct seeds (or --shard I/N)");
  });
});
