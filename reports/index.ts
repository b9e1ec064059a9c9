// The format registry: a format name to the reporter that writes it, so `--report NAME=FILE`
// and the per-format flags (--json FILE, ...) reach the same reporters.
import { htmlReporter } from "./html.js";
import { jsonReporter } from "./json.js";
import { junitReporter } from "./junit.js";
import { markdownReporter } from "./markdown.js";
import type { Reporter } from "./types.js";

export { consoleReporter, summaryLine } from "./console.js";
export { githubReporter } from "./github.js";
export type * from "./types.js";
export { markdownReporter };

/** A reporter writing FILE; "-" goes to `stdout`. */
type Create = (file: string, stdout?: (text: string) => void) => Reporter;

export const FORMATS: Readonly<Record<string, { description: string; create: Create }>> = {
  json: { description: "the machine-readable report (schemaVersion 1)", create: jsonReporter },
  junit: { description: "JUnit XML, one testcase per rule", create: junitReporter },
  html: { description: "a self-contained page with transcripts", create: htmlReporter },
  markdown: {
    description: "a summary for pull requests and job pages",
    create: (file, stdout) => markdownReporter(file, {}, stdout),
  },
};

/** Calls every reporter's hook; one that throws is logged and the others still run. */
export async function fanOut<K extends Exclude<keyof Reporter, "name">>(
  reporters: readonly Reporter[],
  hook: K,
  log: (line: string) => void,
  ...args: Parameters<NonNullable<Reporter[K]>>
): Promise<string[]> {
  const failed: string[] = [];
  for (const reporter of reporters) {
    const fn = reporter[hook] as ((...a: unknown[]) => unknown) | undefined;
    if (typeof fn !== "function") continue;
    try {
      await fn.apply(reporter, args);
    } catch (err) {
      failed.push(reporter.name);
      log(`reporter "${reporter.name}" failed in ${hook}: ${(err as Error).message ?? String(err)}`);
    }
  }
  return failed;
}
