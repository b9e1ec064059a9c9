import { readFileSync } from "node:fs";

/** This tool's name and version, as every report records them: read from the package itself. */
export const TOOL: { name: string; version: string } = (() => {
  // runner/ under the sources, dist/runner/ when built: the package root is one or two levels up.
  for (const up of ["../package.json", "../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "aicontrol-conformance" && pkg.version) return { name: pkg.name, version: pkg.version };
    } catch {
      // not here: try one level further up
    }
  }
  throw new Error("aicontrol-conformance: cannot find its own package.json");
})();
