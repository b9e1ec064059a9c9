import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { XMLParser } from "fast-xml-parser";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import { cli, readReport, runSuite, TEST_TOKEN } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "aicc-reports-"));
const env = { FONLINE_AI_TOKEN: TEST_TOKEN };
const run = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) => cli(args, { ...env, ...extraEnv });

// One run against a bridge with failures writes every form.
const broken = mutants.find((m) => m.name === "lenient-utf8")!.create({ token: TEST_TOKEN });
let endpoint = "";
const files = {
  json: join(dir, "r.json"),
  junit: join(dir, "r.xml"),
  html: join(dir, "r.html"),
  markdown: join(dir, "r.md"),
  summary: join(dir, "summary.md"),
};
let first: Awaited<ReturnType<typeof run>>;
beforeAll(async () => {
  endpoint = `127.0.0.1:${(await broken.listen()).port}`;
  first = await run(
    [
      "--endpoint",
      endpoint,
      "--profile",
      "quick",
      "--seed",
      "11",
      "--json",
      files.json,
      "--junit",
      files.junit,
      "--html",
      files.html,
      "--markdown",
      files.markdown,
    ],
    { GITHUB_STEP_SUMMARY: files.summary },
  );
});
afterAll(() => broken.close());

describe("one run writes all five forms", () => {
  it("console: the per-rule table and the failing rule's details", () => {
    expect(first.code).toBe(1);
    expect(first.out).toMatch(/FAIL {2}ai-control-protocol\.wire\.utf8/);
    expect(first.out).toMatch(/minimal case:/);
    expect(first.out).toMatch(/replay: .*--check wire\.utf8\/malformed --seed \d+ --path/);
  });

  it("JSON: valid against the shipped schema", () => {
    const report = readReport(files.json);
    expect(report.rules.find((r) => r.id.endsWith("wire.utf8"))!.verdict).toBe("fail");
  });

  it("JUnit: one testcase per rule, with failures, errors and skips counted", () => {
    const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(
      readFileSync(files.junit, "utf8"),
    );
    const report = readReport(files.json);
    const suite = xml.testsuites.testsuite;
    const cases = suite.testcase as Record<string, unknown>[];
    expect(cases).toHaveLength(contract.rules.length);
    expect(Number(suite.tests)).toBe(50);
    expect(Number(suite.failures)).toBe(report.summary.fail);
    expect(cases.filter((c) => c.failure).length).toBe(report.summary.fail);
    expect(cases.filter((c) => c.skipped).length).toBe(report.summary.skip);
    expect(cases.filter((c) => c.error).length).toBe(report.summary.error);
    const utf8 = cases.find((c) => c.name === "ai-control-protocol.wire.utf8")!;
    expect(utf8.classname).toBe("ai-control-protocol.wire");
    expect((utf8.failure as { message: string }).message).toMatch(/Malformed UTF-8/);
  });

  it("Markdown: a compact summary, also appended to GITHUB_STEP_SUMMARY", () => {
    const md = readFileSync(files.markdown, "utf8");
    expect(md).toMatch(/^## AiControl conformance: ❌ \d+ failing/);
    expect(md).toContain("`ai-control-protocol.wire.utf8`");
    expect(readFileSync(files.summary, "utf8")).toBe(md);
  });

  it("HTML: one self-contained file", () => {
    const html = readFileSync(files.html, "utf8");
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toContain(TEST_TOKEN);
  });
});

describe("the HTML report in a real browser", () => {
  const chromiumPath = "/usr/bin/chromium";
  it.skipIf(!existsSync(chromiumPath) && !process.env.CI)(
    "filters, searches, and shows a transcript as text and hex",
    async () => {
      const browser = await chromium.launch({
        executablePath: chromiumPath,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
        ],
      });
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const blocked: string[] = [];
        page.on("request", (r) => {
          if (!r.url().startsWith("file:")) blocked.push(r.url());
        });
        await page.goto(pathToFileURL(files.html).href);
        const visible = () => page.locator("details.rule:visible").count();
        expect(await visible()).toBe(50);
        await page.locator('input[data-verdict="pass"]').uncheck();
        await page.locator('input[data-verdict="skip"]').uncheck();
        const notPassing = readReport(files.json).rules.filter(
          (r) => r.verdict !== "pass" && r.verdict !== "skip",
        ).length;
        expect(await visible()).toBe(notPassing);
        await page.locator('input[data-verdict="pass"]').check();
        await page.locator('input[data-verdict="skip"]').check();
        await page.fill("#search", "utf8");
        expect(await visible()).toBeGreaterThanOrEqual(1);
        expect(await page.locator("details.rule:visible code").first().textContent()).toContain("utf8");
        await page.fill("#search", "no rule has this text");
        expect(await page.locator("#empty").isVisible()).toBe(true);
        await page.fill("#search", "wire.utf8");
        const rule = page.locator('details.rule[data-verdict="fail"]:visible').first();
        const transcript = rule.locator("details.transcript").first();
        await transcript.locator("summary").click();
        expect(await transcript.locator("pre.text").first().isVisible()).toBe(true);
        await transcript.locator('button[data-view="hex"]').click();
        expect(await transcript.locator("pre.hex").first().isVisible()).toBe(true);
        expect(await transcript.locator("pre.hex").first().textContent()).toMatch(/^000000 {2}[0-9a-f]{2} /);
        await page.screenshot({ path: "test-output/html-report.png", fullPage: false });
        expect(blocked).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});

describe("reporters", () => {
  it("a reporter that throws is reported and never aborts the run", async () => {
    const thrower = {
      name: "thrower",
      onRunStart() {
        throw new Error("boom 1");
      },
      onCheckEnd() {
        throw new Error("boom 2");
      },
      onRunEnd() {
        throw new Error("boom 3");
      },
    };
    let seen: Report | undefined;
    const report = await runSuite(undefined, {
      rules: ["method.ping"],
      reporters: [
        thrower,
        {
          name: "after",
          onRunEnd: (r) => {
            seen = r;
          },
        },
      ],
    });
    expect(report.rules.find((r) => r.id.endsWith("method.ping"))!.verdict).toBe("pass");
    expect(seen).toBe(report);
  });
});

describe("CI gate features", () => {
  it("--baseline: listed failures pass the gate, a new failure or a stale entry fails it", async () => {
    const base = join(dir, "baseline.yaml");
    // The one failing check breaks wire.utf8 and error.parse: listing the check covers both.
    writeFileSync(
      base,
      "known-failures:\n  - check: wire.utf8/malformed\n    reason: lenient decoder, being replaced\n",
    );
    const ok = await run([
      "--endpoint",
      endpoint,
      "--profile",
      "quick",
      "--rules",
      "wire.utf8,method.ping",
      "--baseline",
      base,
    ]);
    expect(ok.out).toMatch(/1 known failure accepted, 0 new, 0 stale/);
    expect(ok.code).toBe(0);

    writeFileSync(base, "known-failures:\n  - rule: method.ping\n    reason: it used to fail\n");
    const stale = await run([
      "--endpoint",
      endpoint,
      "--profile",
      "quick",
      "--rules",
      "wire.utf8,method.ping",
      "--baseline",
      base,
    ]);
    expect(stale.out).toMatch(/STALE method.ping: it passes now/);
    expect(stale.out).toMatch(/NEW {3}ai-control-protocol.wire.utf8/);
    expect(stale.code).toBe(1);

    writeFileSync(base, "known-failures:\n  - rule: wire.utf9\n    reason: typo\n");
    expect((await run(["--baseline", base])).err).toMatch(/no rule "wire.utf9"/);
    writeFileSync(base, "known-failures:\n  - rule: wire.utf8\n");
    expect((await run(["--baseline", base])).err).toMatch(/every known failure needs a reason/);
  });

  it("--save-failures: a case per file keyed by rule, replayed first by later runs", async () => {
    const corpus = join(dir, "corpus");
    const save = await run([
      "--endpoint",
      endpoint,
      "--profile",
      "quick",
      "--rules",
      "wire.utf8",
      "--save-failures",
      corpus,
    ]);
    expect(save.code).toBe(1);
    expect(readdirSync(corpus)).toContain("ai-control-protocol.wire.utf8");
    const saved = JSON.parse(
      readFileSync(join(corpus, "ai-control-protocol.wire.utf8", "wire.utf8__malformed.json"), "utf8"),
    );
    expect(saved).toMatchObject({ check: "wire.utf8/malformed", seed: expect.any(Number), path: expect.any(String) });

    const again = await run([
      "--endpoint",
      endpoint,
      "--profile",
      "quick",
      "--rules",
      "wire.utf8",
      "--save-failures",
      corpus,
    ]);
    expect(again.err).toContain("corpus: STILL FAILING wire.utf8/malformed");

    const fixed = new ReferenceBridge({ token: TEST_TOKEN });
    const port = (await fixed.listen()).port;
    try {
      const after = await run([
        "--endpoint",
        `127.0.0.1:${port}`,
        "--profile",
        "quick",
        "--rules",
        "wire.utf8",
        "--save-failures",
        corpus,
      ]);
      expect(after.err).toContain("corpus: FIXED wire.utf8/malformed");
      expect(after.code).toBe(0);
    } finally {
      await fixed.close();
    }
  });

  it("--compare: which rules changed verdict between two reports", async () => {
    const fixed = new ReferenceBridge({ token: TEST_TOKEN });
    const port = (await fixed.listen()).port;
    const good = join(dir, "good.json");
    try {
      expect(
        (await run(["--endpoint", `127.0.0.1:${port}`, "--profile", "quick", "--seed", "11", "--json", good])).code,
      ).toBe(0);
    } finally {
      await fixed.close();
    }
    const r = await run(["--compare", good, files.json]);
    expect(r.out).toMatch(/REGRESSED ai-control-protocol.wire.utf8: pass -> fail/);
    expect(r.code).toBe(1);
    const back = await run(["--compare", files.json, good]);
    expect(back.out).toMatch(/IMPROVED {2}ai-control-protocol.wire.utf8: fail -> pass/);
    expect(back.code).toBe(0);
  });
});
