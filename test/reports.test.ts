import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { stripVTControlCharacters } from "node:util";
import { XMLParser } from "fast-xml-parser";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mutants } from "../bridges/mutants/index.js";
import { ReferenceBridge } from "../bridges/reference/bridge.js";
import { contract } from "../protocol/contract.js";
import { type ConsoleOptions, consoleReporter } from "../reports/console.js";
import { escapeData, escapeProperty, githubReporter } from "../reports/github.js";
import { renderHtml } from "../reports/html.js";
import { renderJunit } from "../reports/junit.js";
import { renderMarkdown } from "../reports/markdown.js";
import { cleanMessage } from "../reports/output.js";
import type { CheckReport, ReasonKind, Report, RuleReport, Verdict } from "../reports/types.js";
import { allChecks } from "../suites/index.js";
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
        // The hex view is drawn on demand, also for bytes that are not UTF-8 (sent as base64).
        const raw = transcript.locator("pre.hex[data-base64]").first();
        expect(await raw.textContent()).toMatch(/^000000 {2}[0-9a-f]{2} /);
        // The overview's link reaches its rule even when the filters hide it.
        await page.fill("#search", "");
        await page.locator('input[data-verdict="fail"]').uncheck();
        const id = `${contract.prefix}.wire.utf8`;
        await page.locator(`.overview a[href="#rule-${id}"]`).click();
        const target = page.locator(`details.rule[id="rule-${id}"]`);
        expect(await target.isVisible()).toBe(true);
        expect(await target.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
        expect(await page.locator('input[data-verdict="fail"]').isChecked()).toBe(true);
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
    // A run that passes with its known failures reads as one: KNOWN with the baseline's reason,
    // counted apart, and no "Failed rules".
    expect(ok.out).toMatch(
      /^ {2}KNOWN ai-control-protocol.wire.utf8 +known failure \(baseline\): lenient decoder, being replaced$/m,
    );
    expect(ok.out).not.toMatch(/FAIL|Failed rules/);
    expect(ok.out).toMatch(/rules: 1 pass, 0 fail, 1 known, 0 warn, 0 error, \d+ skip/);

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
    expect((await run(["--baseline", base])).err).toMatch(/every entry needs a reason/);
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
    expect(saved).toMatchObject({
      check: "wire.utf8/malformed",
      seed: expect.any(Number),
      path: expect.any(String),
      runs: 15,
    });

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
    // A run on other cases proves nothing about the old ones.
    const back = await run(["--compare", files.json, good]);
    expect(back.out).toMatch(/CHANGED {3}ai-control-protocol.wire.utf8: fail -> pass \(not judged on the same cases/);
    expect(back.out).not.toContain("IMPROVED");
    expect(back.code).toBe(0);
    // --last-failed replays the old failing cases first: only then is the change an improvement.
    const proven = join(dir, "proven.json");
    const again = new ReferenceBridge({ token: TEST_TOKEN });
    const at = (await again.listen()).port;
    try {
      const lf = await run(["--endpoint", `127.0.0.1:${at}`, "--last-failed", files.json, "--json", proven]);
      expect(lf.code).toBe(0);
      expect(lf.err).toContain("last failed: FIXED wire.utf8/malformed");
    } finally {
      await again.close();
    }
    const improved = await run(["--compare", files.json, proven]);
    expect(improved.out).toMatch(/IMPROVED {2}ai-control-protocol.wire.utf8: fail -> pass/);
  });
});

// A report built by hand, so each reporter is tested on exactly the cases it has to get right:
// one check failing three rules, a warning, an inconclusive check whose message carries
// fast-check's run summary and a stack, a rule left out by --rules, and text with markup in it.
const P = contract.prefix;
const markup = "reply <b>bold</b> & a | pipe";
const shared: CheckReport = {
  id: "wire.utf8/malformed",
  verdict: "fail",
  message: `Malformed UTF-8 was accepted: ${markup}`,
  expected: "error -32700 or a close",
  actual: '{"jsonrpc":"2.0","id":1,"result":{"ok":true}} <i>',
  counterexample: "[0xff]",
  replay: "npx aicontrol-conformance --check wire.utf8/malformed --seed 5 --path 0:1",
  durationMs: 600,
  transcript: [
    { dir: "send", t: 0, text: '{"jsonrpc":"2.0"}', length: 17 },
    { dir: "recv", t: 1, base64: Buffer.from([0xff, 0xc0, 0x41]).toString("base64"), length: 3 },
  ],
};
const internals = [
  "the property could not be run: Error: Property failed after 1 tests",
  '{ seed: -1819918769, path: "0:0", endOnFailure: true }',
  'Counterexample: [""]',
  "Shrunk 3 time(s)",
  "Got error: TypeError: the judge threw boom",
  "    at judge (file:///work/main/dist/suites/method/status.js:10:5)",
  "    at async Promise.all (index 0)",
  "",
  "Hint: Enable verbose mode in order to have the list of all failing values encountered during the run",
].join("\n");
const ruleOf = (
  id: string,
  verdict: Verdict,
  checks: CheckReport[],
  reason?: string,
  reasonKind?: ReasonKind,
): RuleReport => ({
  id: `${P}.${id}`,
  title: id,
  verdict,
  group: id.split(".")[0]!,
  level: verdict === "warn" ? "SHOULD" : "MUST",
  observed: "wire",
  requirement: `the requirement of ${id}`,
  ...(reason ? { reason } : {}),
  ...(reasonKind ? { reasonKind } : {}),
  checks,
});
function fixture(overrides: Partial<Report> = {}): Report {
  const rules = [
    ruleOf("wire.utf8", "fail", [shared]),
    ruleOf("error.parse", "fail", [shared]),
    ruleOf("error.invalid-request", "fail", [
      shared,
      { id: "error.invalid-request/array", verdict: "pass", message: "ok", durationMs: 30 },
    ]),
    ruleOf("method.ping", "warn", [
      {
        id: "method.ping/no-params",
        verdict: "warn",
        message: "A request without params was served: 100% lenient\r\nsecond line",
        replay: "npx aicontrol-conformance --check method.ping/no-params --seed 5",
        durationMs: 40,
      },
    ]),
    ruleOf("method.status", "error", [
      {
        id: "method.status/fields",
        verdict: "error",
        message: internals,
        actual: "\u001b[2J\u001b[31mred",
        durationMs: 200,
      },
    ]),
    ruleOf("method.events", "skip", [], "not selected (--rules / --skip)", "not-chosen"),
    ruleOf("security.plaintext", "skip", [], "observed none: a deployment decision", "not-observable"),
    ruleOf("method.observe", "pass", [
      { id: "method.observe/sequence", verdict: "pass", message: "12 generated cases passed.", durationMs: 100 },
    ]),
  ];
  return {
    schemaVersion: 1,
    tool: { name: "aicontrol-conformance", version: "0.0.0" },
    contract: { version: 1, sha256: "0".repeat(64), rules: rules.length },
    target: { kind: "bridge", endpoint: "127.0.0.1:43011", spawned: false },
    seed: 5,
    startedAt: "2026-01-01T00:00:00.000Z",
    durationMs: 1000,
    summary: { pass: 1, fail: 3, warn: 1, skip: 2, error: 1 },
    rules,
    ...overrides,
  };
}

// The structure of the Jenkins JUnit schema (xunit-plugin junit-10.xsd): which elements may
// hold which, which attributes each may carry, and which are required.
const JUNIT: Record<string, { attrs: string[]; required?: string[]; children: string[] }> = {
  testsuites: { attrs: ["name", "time", "tests", "failures", "errors"], children: ["testsuite"] },
  testsuite: {
    attrs: [
      "name",
      "tests",
      "failures",
      "errors",
      "group",
      "time",
      "skipped",
      "timestamp",
      "hostname",
      "id",
      "package",
      "file",
      "log",
      "url",
    ],
    required: ["name", "tests", "failures", "errors"],
    children: ["testsuite", "properties", "testcase", "system-out", "system-err"],
  },
  properties: { attrs: [], children: ["property"] },
  property: { attrs: ["name", "value"], required: ["name", "value"], children: [] },
  testcase: {
    attrs: ["name", "time", "classname", "group"],
    required: ["name"],
    children: [
      "skipped",
      "error",
      "failure",
      "rerunFailure",
      "rerunError",
      "flakyFailure",
      "flakyError",
      "system-out",
      "system-err",
    ],
  },
  failure: { attrs: ["type", "message"], children: [] },
  error: { attrs: ["type", "message"], children: [] },
  skipped: { attrs: ["type", "message"], children: [] },
  "system-out": { attrs: [], children: [] },
  "system-err": { attrs: [], children: [] },
};
const SUREFIRE_TIME = /^(?:(?:[0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(?:\.[0-9]*)?$/;

/** Every way the document breaks the schema's structure (empty: it validates). */
function junitProblems(text: string): string[] {
  const problems: string[] = [];
  type Node = Record<string, unknown> & { ":@"?: Record<string, string> };
  const tree = new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: "",
    parseTagValue: false,
    parseAttributeValue: false,
  }).parse(text) as Node[];
  const tagOf = (n: Node) => Object.keys(n).find((k) => k !== ":@")!;
  const visit = (node: Node, parent: string | undefined, path: string) => {
    const tag = tagOf(node);
    if (tag === "#text") {
      if (parent && JUNIT[parent]!.children.length && String(node[tag]).trim())
        problems.push(`${path}: text is not allowed here`);
      return;
    }
    const rule = JUNIT[tag];
    if (!rule) return void problems.push(`${path}/${tag}: no such element`);
    if (parent && !JUNIT[parent]!.children.includes(tag)) problems.push(`${path}/${tag}: not allowed in <${parent}>`);
    const attrs = node[":@"] ?? {};
    for (const a of Object.keys(attrs))
      if (!rule.attrs.includes(a)) problems.push(`${path}/${tag}: attribute "${a}" is not allowed`);
    for (const a of rule.required ?? [])
      if (!(a in attrs)) problems.push(`${path}/${tag}: attribute "${a}" is missing`);
    if ((tag === "testsuite" || tag === "testsuites") && attrs.time !== undefined && !SUREFIRE_TIME.test(attrs.time))
      problems.push(`${path}/${tag}: time "${attrs.time}" is not a SUREFIRE_TIME`);
    for (const child of node[tag] as Node[]) visit(child, tag, `${path}/${tag}`);
  };
  const roots = tree.filter((n) => !tagOf(n).startsWith("?"));
  if (roots.length !== 1 || !["testsuites", "testsuite"].includes(tagOf(roots[0]!)))
    problems.push("the document's root is not <testsuites> or <testsuite>");
  for (const root of roots) visit(root, undefined, "");
  return problems;
}

const junitCases = (text: string) => {
  const doc = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: "",
    isArray: (n) => n === "testcase" || n === "property",
  }).parse(text);
  return { doc, suite: doc.testsuites.testsuite, cases: doc.testsuites.testsuite.testcase as Record<string, any>[] };
};

describe("JUnit XML", () => {
  it("the schema checker rejects what the Jenkins schema rejects", () => {
    expect(
      junitProblems('<testsuites skipped="1"><testsuite name="a" tests="1" failures="0" errors="0"/></testsuites>'),
    ).toEqual(['/testsuites: attribute "skipped" is not allowed']);
    expect(
      junitProblems(
        '<testsuites><testsuite name="a" tests="1" failures="0"><testcase name="x"><properties/></testcase></testsuite></testsuites>',
      ),
    ).toEqual([
      '/testsuites/testsuite: attribute "errors" is missing',
      "/testsuites/testsuite/testcase/properties: not allowed in <testcase>",
    ]);
  });

  it("validates against the Jenkins JUnit schema's structure, for a run and for every verdict", () => {
    expect(junitProblems(readFileSync(files.junit, "utf8"))).toEqual([]);
    expect(junitProblems(renderJunit(fixture()))).toEqual([]);
    expect(junitProblems(renderJunit(fixture({ blocked: "the bridge <x> is gone" })))).toEqual([]);
  });

  it("names are stable: testcase = rule ID, classname = the rule's group, no port in any name", () => {
    const text = renderJunit(fixture());
    const { doc, suite, cases } = junitCases(text);
    expect(cases.map((c) => c.name)).toEqual(fixture().rules.map((r) => r.id));
    expect(cases.find((c) => c.name === `${P}.error.parse`)!.classname).toBe(`${P}.error`);
    for (const name of [doc.testsuites.name, suite.name]) expect(name).not.toMatch(/43011|127\.0\.0\.1/);
    const real = junitCases(readFileSync(files.junit, "utf8"));
    expect(real.suite.name).not.toContain(endpoint.split(":")[1]);
  });

  it("testcase times add up to no more than the run took, and the suite's time is the run's", () => {
    for (const report of [fixture(), readReport(files.json)]) {
      const { doc, suite, cases } = junitCases(renderJunit(report));
      const sum = cases.reduce((t, c) => t + Number(c.time), 0);
      expect(sum).toBeLessThanOrEqual(report.durationMs / 1000 + 1e-9);
      expect(Number(suite.time)).toBe(report.durationMs / 1000);
      expect(Number(doc.testsuites.time)).toBe(report.durationMs / 1000);
    }
    // The shared check ran once for 600 ms: its three rules share that time.
    const { cases } = junitCases(renderJunit(fixture()));
    const time = (id: string) => Number(cases.find((c) => c.name === `${P}.${id}`)!.time);
    expect(time("wire.utf8") + time("error.parse") + time("error.invalid-request")).toBeCloseTo(0.63, 2);
    // Shards merged into one report ran side by side: their times are scaled to the wall time.
    const merged = fixture({ durationMs: 100 });
    const sum = junitCases(renderJunit(merged)).cases.reduce((t, c) => t + Number(c.time), 0);
    expect(sum).toBeLessThanOrEqual(0.1);
  });

  it("a warning passes but shows: WARN in the testcase's output and a warning property on the suite", () => {
    const { suite, cases } = junitCases(renderJunit(fixture()));
    const ping = cases.find((c) => c.name === `${P}.method.ping`)!;
    expect(ping.failure).toBeUndefined();
    expect(ping["system-out"]).toMatch(/^WARN method\.ping\/no-params: A request without params was served/);
    const warnings = (suite.properties.property as { name: string; value: string }[]).filter(
      (p) => p.name === "warning",
    );
    expect(warnings.map((p) => p.value)).toEqual([
      `${P}.method.ping: method.ping/no-params: A request without params was served: 100% lenient`,
    ]);
  });

  it("failures and errors carry the check, without fast-check's internals", () => {
    const { cases } = junitCases(renderJunit(fixture()));
    const status = cases.find((c) => c.name === `${P}.method.status`)!;
    expect(status.error.message).toBe("the property could not be run: TypeError: the judge threw boom");
    expect(status.error["#text"]).not.toMatch(/Shrunk|Property failed|at judge/);
    const parse = cases.find((c) => c.name === `${P}.error.parse`)!;
    expect(parse.failure.message).toMatch(/^wire\.utf8\/malformed: Malformed UTF-8/);
    expect(parse.failure["#text"]).toContain(`also fails: ${P}.wire.utf8, ${P}.error.invalid-request`);
  });
});

describe("messages", () => {
  it("lose fast-check's run summary and stack frames, and keep what the check said", () => {
    expect(cleanMessage(internals)).toBe("the property could not be run: TypeError: the judge threw boom");
    expect(cleanMessage("The bridge replied:\n  {}")).toBe("The bridge replied:\n  {}");
  });
});

describe("console", () => {
  const capture = (options: ConsoleOptions, report: Report, checks: CheckReport[] = []) => {
    let text = "";
    const reporter = consoleReporter({ tty: false, env: {}, ...options, write: (t) => void (text += t) });
    reporter.onRunStart!({
      target: { label: "bridge at 127.0.0.1:43011", endpoint: "127.0.0.1:43011", spawned: false },
      seed: 5,
      checks: checks.length,
      profile: "quick",
      strict: false,
    });
    checks.forEach((c, i) => {
      const info = { id: c.id, rules: [], description: "" };
      reporter.onCheckStart!(info, i, checks.length);
      reporter.onCheckEnd!(info, c);
    });
    reporter.onRunEnd!(report);
    return text;
  };

  it("prints a check that fails several rules once, grouped by rule, and ends with the failed rules", () => {
    const out = capture({}, fixture());
    expect(out.match(/wire\.utf8\/malformed: Malformed UTF-8/g)).toHaveLength(1);
    expect(out.match(/expected: +error -32700 or a close/g)).toHaveLength(1);
    expect(out.match(/minimal case: +\[0xff\]/g)).toHaveLength(1);
    expect(out.match(/replay: +npx aicontrol-conformance --check wire\.utf8\/malformed/g)).toHaveLength(1);
    expect(out.match(/wire\.utf8\/malformed: shown above under ai-control-protocol\.wire\.utf8/g)).toHaveLength(2);
    const tail = out.trimEnd().split("\n").slice(-5);
    expect(tail).toEqual([
      "Failed rules (4):",
      `  FAIL  ${P}.wire.utf8`,
      `  FAIL  ${P}.error.parse`,
      `  FAIL  ${P}.error.invalid-request`,
      `  ERROR ${P}.method.status`,
    ]);
  });

  it("hides rules that were not selected unless verbose", () => {
    expect(capture({}, fixture())).not.toContain(`${P}.method.events`);
    expect(capture({}, fixture())).toContain("1 rule(s) not selected");
    expect(capture({}, fixture())).toContain(`${P}.security.plaintext`);
    expect(capture({ verbose: true }, fixture())).toContain(`${P}.method.events`);
  });

  it("shows no fast-check internals or stack frames", () => {
    const status = fixture().rules.find((r) => r.id.endsWith("method.status"))!.checks;
    const out = capture({}, fixture(), status);
    expect(out).toContain("the property could not be run: TypeError: the judge threw boom");
    expect(out).not.toMatch(/Property failed after|Shrunk \d|Counterexample:|\bat judge \(|Hint:/);
  });

  it("cuts the live progress line to the terminal's width", () => {
    const long = { id: `wire.utf8/${"x".repeat(200)}`, verdict: "pass" as const, message: "ok", durationMs: 1 };
    const out = capture({ tty: true, live: true, columns: 40 }, fixture(), [long]);
    const drawn = stripVTControlCharacters(out.split("\r").find((s) => s.includes("[1/1]"))!);
    expect(drawn.length).toBeLessThan(40);
    expect(drawn).toMatch(/…$/);
  });

  it("is plain text without a terminal, and without colour under NO_COLOR", () => {
    const checks = fixture().rules.flatMap((r) => r.checks);
    const piped = capture({ live: true }, fixture(), checks);
    expect(piped).not.toMatch(/[\r\x1b]/);
    // A bridge's reply that carries escape sequences is shown, not obeyed.
    expect(piped).toContain("\\e[2J\\e[31mred");
    expect(capture({ tty: true, live: false, env: { NO_COLOR: "1" } }, fixture(), checks)).not.toContain("\x1b");
    // On a terminal without NO_COLOR the same output is coloured: the check above can fail.
    expect(capture({ tty: true, live: false, env: {} }, fixture(), checks)).toContain("\x1b[31m");
  });

  it("ends with where the time went, except when quiet", () => {
    const wire = { lines: 8140, bytesSent: 3 << 20, bytesReceived: 4096, waitingMs: 2500 };
    const out = capture({}, fixture({ wire, durationMs: 4000 }));
    expect(out).toContain(
      "time: 4.0 s, of it 2.5 s waiting on the bridge; 8,140 lines sent (3.0 MiB), 4.0 KiB received",
    );
    expect(capture({ quiet: true }, fixture({ wire }))).not.toContain("time:");
  });

  it("says why nothing could be judged once", () => {
    const out = capture({}, fixture({ blocked: "the bridge refused the token" }));
    expect(out.match(/the bridge refused the token/g)).toHaveLength(1);
  });
});

describe("known failures (--baseline)", () => {
  const baselined = () =>
    fixture({
      baseline: {
        file: "baseline.yaml",
        known: [
          {
            id: "wire.utf8/malformed",
            reason: "decoder rewrite pending",
            rules: [`${P}.wire.utf8`, `${P}.error.parse`],
          },
        ],
        stale: [],
      },
    });

  it("are KNOWN in the console with the baseline's reason, counted apart", () => {
    let out = "";
    consoleReporter({ tty: false, env: {}, write: (t) => void (out += t) }).onRunEnd!(baselined());
    expect(out).toMatch(
      new RegExp(`^ {2}KNOWN ${P}.wire.utf8 +known failure \\(baseline\\): decoder rewrite pending$`, "m"),
    );
    expect(out).toMatch(/8 rules: 1 pass, 1 fail, 2 known, 1 warn, 1 error, 2 skip/);
    const failed = out.slice(out.indexOf("Failed rules"));
    expect(failed).toMatch(/^Failed rules \(2\):/);
    expect(failed).not.toContain(`${P}.wire.utf8`);
  });

  it("are counted apart in Markdown and skipped with the reason in JUnit", () => {
    const md = renderMarkdown(baselined());
    expect(md).toMatch(/❌ 1 failing \(2 known\)/);
    expect(md).toContain("known failure (baseline): decoder rewrite pending");
    const xml = renderJunit(baselined());
    expect(xml).toContain('failures="1"');
    expect(xml).toMatch(/<skipped message="known failure \(baseline\): decoder rewrite pending"\/>/);
  });
});

describe("long reasons", () => {
  const long = `the bridge answered ${"with a very long explanation ".repeat(12)}and then stopped`;
  const report = () =>
    fixture({
      rules: [
        ruleOf("wire.utf8", "fail", [{ ...shared, message: long }]),
        ruleOf("security.plaintext", "skip", [], `observed none: ${long}`),
      ],
    });
  const print = (options: ConsoleOptions) => {
    let out = "";
    const reporter = consoleReporter({ env: {}, ...options, write: (t) => void (out += t) });
    reporter.onCheckEnd!({ id: shared.id, rules: [], description: "" }, { ...shared, message: long });
    reporter.onRunEnd!(report());
    return stripVTControlCharacters(out);
  };

  it("are never cut in a pipe, a file or under -v", () => {
    for (const out of [print({ tty: false }), print({ tty: true, verbose: true, columns: 60 })]) {
      expect(out).not.toContain("…");
      expect(out.match(new RegExp(long, "g"))!.length).toBeGreaterThanOrEqual(3);
    }
    expect(renderMarkdown(report())).toContain(`observed none: ${long}`);
    expect(renderMarkdown(report())).not.toContain("…");
    expect(renderHtml(report())).toContain(long);
  });

  it("wrap to a terminal's width, whole", () => {
    const out = print({ tty: true, live: false, columns: 60 });
    expect(out).not.toContain("…");
    const wrapped = out.split("\n").filter((l) => l.includes("very long explanation"));
    expect(wrapped.length).toBeGreaterThan(6);
    for (const line of wrapped) expect(line.length, line).toBeLessThanOrEqual(60);
    expect(out.replace(/\n */g, " ")).toContain(long);
  });
});

describe("a check's finding on a rule outside the selection", () => {
  it("gives that rule no verdict and is a note under the selected rule it ran for", async () => {
    const check = {
      id: "error.parse/probe",
      rules: ["error.parse"] as const,
      description: "a check of error.parse that runs into a broken line",
      run: async () => ({
        verdict: "fail" as const,
        message: "The response line is not JSON.",
        rules: ["wire.ndjson" as const],
      }),
    };
    // The catalogue's checks of the rules not selected (so no rule is uncovered), which do not run; and the probe.
    const selection = ["error.parse", "wire.line-limit"];
    const others = allChecks.filter((c) => !c.rules.some((r) => selection.includes(r)));
    const report = await runSuite(undefined, { rules: selection, checks: [...others, check] });
    const ndjson = report.rules.find((r) => r.id === `${P}.wire.ndjson`)!;
    expect(ndjson).toMatchObject({ verdict: "skip", reason: "not selected (--rules / --skip)", checks: [] });
    // The selected rule was not judged, and nothing else fails the run for it: inconclusive.
    const parse = report.rules.find((r) => r.id === `${P}.error.parse`)!;
    expect(parse.verdict).toBe("error");
    expect(parse.checks[0]!.message).toMatch(/^inconclusive: the check stopped at a fail on wire.ndjson/);
    expect(parse.notes).toEqual([
      "error.parse/probe found a fail on wire.ndjson (not selected): The response line is not JSON.",
    ]);
    let out = "";
    consoleReporter({ tty: false, env: {}, write: (t) => void (out += t) }).onRunEnd!(report);
    expect(out).toMatch(/^ +note: error.parse\/probe found a fail on wire.ndjson \(not selected\)/m);
    expect(out).not.toMatch(/FAIL/);
  });
});

describe("Markdown", () => {
  it("lists a check failing several rules once, with its rules", () => {
    const md = renderMarkdown(fixture());
    const rows = md.split("\n").filter((l) => l.includes("`wire.utf8/malformed`"));
    expect(rows).toHaveLength(1);
    for (const id of ["wire.utf8", "error.parse", "error.invalid-request"]) expect(rows[0]).toContain(`\`${P}.${id}\``);
  });

  it("escapes <, > and & so GitHub shows text, and keeps | escaped in tables", () => {
    const md = renderMarkdown(fixture());
    const row = md.split("\n").find((l) => l.includes("`wire.utf8/malformed`"))!;
    expect(row).toContain("reply &lt;b&gt;bold&lt;/b&gt; &amp; a \\| pipe");
    expect(row).toContain("&lt;i&gt;");
    // Every row has as many cells as its header: no `|` from a message split a cell.
    expect(row.replace(/\\\|/g, "").split("|").length - 2).toBe(6);
    expect(md.replace(/<\/?(details|summary)>/g, "")).not.toMatch(/<\/?[a-z]/i);
  });
});

describe("HTML", () => {
  it("opens with an overview linking each failing or unjudged rule", () => {
    const html = renderHtml(fixture());
    const top = html.slice(html.indexOf("<main>"), html.indexOf('<section class="group">'));
    for (const id of ["wire.utf8", "error.parse", "error.invalid-request", "method.status"]) {
      expect(top).toContain(`href="#rule-${P}.${id}"`);
      expect(html).toContain(`id="rule-${P}.${id}"`);
    }
    expect(top).not.toContain(`#rule-${P}.method.ping`);
    expect(top).toContain("the property could not be run: TypeError: the judge threw boom");
  });

  it("leaves the hex view to the page's script: no dump per entry in the file", () => {
    const html = renderHtml(fixture());
    expect(html).not.toMatch(/000000 {2}[0-9a-f]{2} /);
    expect(html).toContain(`data-base64="${Buffer.from([0xff, 0xc0, 0x41]).toString("base64")}"`);
    expect(readFileSync(files.html, "utf8")).not.toMatch(/000000 {2}[0-9a-f]{2} /);
  });
});

describe("GitHub Actions annotations", () => {
  const annotate = (report: Report, env: NodeJS.ProcessEnv) => {
    let text = "";
    githubReporter((t) => void (text += t), env).onRunEnd!(report);
    return text;
  };

  it("writes nothing outside GitHub Actions", () => {
    expect(annotate(fixture(), {})).toBe("");
    expect(annotate(fixture(), { GITHUB_ACTIONS: "false" })).toBe("");
  });

  it("an error per failing rule and a warning per warning, one line each, titled by the rule ID", () => {
    const lines = annotate(fixture(), { GITHUB_ACTIONS: "true" }).split("\n").filter(Boolean);
    expect(lines.map((l) => l.slice(0, l.indexOf("::", 2)))).toEqual([
      `::error title=${P}.wire.utf8`,
      `::error title=${P}.error.parse`,
      `::error title=${P}.error.invalid-request`,
      `::error title=${P}.method.status`,
      `::warning title=${P}.method.ping`,
    ]);
    expect(lines[0]).toMatch(/^::error title=[^:]+::wire\.utf8\/malformed: Malformed UTF-8 was accepted: reply <b>/);
    expect(lines[0]).toContain("%0Aexpected: error -32700 or a close%0Aactual: ");
    expect(lines[3]).toContain(
      "::not judged: method.status/fields: the property could not be run: TypeError: the judge threw boom%0Aactual: ",
    );
    expect(lines[4]).toContain(
      "::method.ping/no-params: A request without params was served: 100%25 lenient%0D%0Asecond line",
    );
  });

  it("escapes %, CR and LF in messages, and : and , in titles", () => {
    expect(escapeData("100% a\r\nb")).toBe("100%25 a%0D%0Ab");
    expect(escapeProperty("a:b,c%")).toBe("a%3Ab%2Cc%25");
    const blocked = annotate(fixture({ blocked: "no token\nset" }), { GITHUB_ACTIONS: "true" });
    expect(blocked).toBe("::error title=AiControl conformance::No check could be judged: no token%0Aset\n");
  });
});

describe("what happened to the target", () => {
  const report = fixture({
    stopped: { duty: "completions", after: "command.x/typed", detail: "the accepted command 7 did not complete" },
    targetExits: [{ check: "wire.utf8/malformed", exit: "signal SIGSEGV", stderr: "Segmentation fault <core>" }],
  });

  it("is told by every human-readable reporter, ahead of the findings", () => {
    const md = renderMarkdown(report);
    const html = renderHtml(report);
    const junit = junitCases(renderJunit(report)).suite["system-err"] as string;
    for (const text of [md, html, junit]) {
      expect(text).toMatch(/spawned bridge exited \(signal SIGSEGV\) during wire\.utf8\/malformed/);
      expect(text).toMatch(/stopped completing commands after command\.x\/typed/);
    }
    expect(md.indexOf("SIGSEGV")).toBeLessThan(md.indexOf("`wire.utf8/malformed`"));
    expect(html).toContain("Segmentation fault &lt;core&gt;");
    expect(junitProblems(renderJunit(report))).toEqual([]);
  });
});
