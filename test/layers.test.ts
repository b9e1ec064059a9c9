import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = new URL("../scripts/check-layers.js", import.meta.url).pathname;

/** Runs the layer check on a tree of the files given (path to text), planted in a temporary directory. */
function check(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), "aicc-layers-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, dirname(path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const ran = spawnSync(process.execPath, [SCRIPT], { cwd: root, encoding: "utf8" });
  return { code: ran.status, out: ran.stdout, err: ran.stderr };
}

describe("the layer check (npm run lint)", () => {
  it("passes a tree whose imports flow one way", () => {
    const ran = check({
      "protocol/a.ts": 'import { b } from "./b.js";\nexport const a = b;\n',
      "protocol/b.ts": "export const b = 1;\n",
      "runner/run.ts": 'import { a } from "../protocol/a.js";\nexport const r = a;\n',
    });
    expect(ran).toMatchObject({ code: 0, out: expect.stringMatching(/no import circle/) });
  });

  it("fails on an import circle, type imports and dynamic imports included, naming the way round", () => {
    const typeOnly = check({
      "runner/run.ts": 'import { attempt } from "./attempt.js";\nexport interface RunOptions { n: number }\n',
      "runner/attempt.ts":
        'import type { RunOptions } from "./run.js";\nexport const attempt = (o: RunOptions) => o;\n',
    });
    expect(typeOnly.code).toBe(1);
    expect(typeOnly.err).toMatch(/runner\/(run|attempt)\.ts -> runner\/(attempt|run)\.ts -> runner\/(run|attempt)\.ts/);
    const dynamic = check({
      "bridges/clients/reference.ts": 'export class C {}\nexport const load = () => import("./mutants.js");\n',
      "bridges/clients/mutants.ts": 'import { C } from "./reference.js";\nexport class M extends C {}\n',
    });
    expect(dynamic.code).toBe(1);
    expect(dynamic.err).toMatch(/Import circles[\s\S]*bridges\/clients\/(reference|mutants)\.ts ->/);
  });

  it("fails on an import across a layer the wrong way", () => {
    const ran = check({
      "protocol/a.ts": 'import { r } from "../runner/run.js";\n',
      "runner/run.ts": "export const r = 1;\n",
    });
    expect(ran.code).toBe(1);
    expect(ran.err).toMatch(/protocol\/a\.ts: imports \.\.\/runner\/run\.js \(protocol must not import runner\)/);
  });
});
