import { describe, expect, it } from "vitest";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { mutants } from "../bridges/mutants/index.js";
import { problems, runSuite, verdictOf } from "./helpers.js";

describe("the reference bridge", () => {
  it("passes every check with a token", async () => {
    const report = await runSuite();
    expect(problems(report)).toEqual([]);
    expect(report.rules).toHaveLength(50);
  });

  it("passes every check without a token (authorization checks skip)", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token }), { token: "" });
    expect(problems(report)).toEqual([]);
    expect(verdictOf(report, "error.unauthorized")).toBe("skip");
  });

  it("passes every check when it serves one connection at a time", async () => {
    const report = await runSuite((token) => new ReferenceBridge({ token, singleConnection: true }));
    expect(problems(report)).toEqual([]);
  });
});

describe.each(mutants.map((m) => [m.name, m] as const))("mutant %s", (_name, mutant) => {
  it(`fails on ${mutant.breaks} (${mutant.description})`, async () => {
    const report = await runSuite((token) => mutant.create({ token }), { rules: [mutant.breaks] });
    expect(verdictOf(report, mutant.breaks)).toBe("fail");
  });
});
