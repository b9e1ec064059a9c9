// The import-boundary check: data and imports flow one way,
//   protocol <- generators <- suites <- runner -> reports,   bridges on protocol alone,
// and nothing imports the runner but the entry points (bin.ts, index.ts), bench and tests.
// Exits 1 naming every import that crosses a boundary the wrong way.
import { readdirSync, readFileSync } from "node:fs";
import { join, normalize, relative } from "node:path";

const ALLOWED = {
  protocol: ["protocol"],
  generators: ["protocol", "generators"],
  suites: ["protocol", "generators", "suites"],
  reports: ["protocol", "reports"],
  runner: ["protocol", "generators", "suites", "reports", "runner"],
  bridges: ["protocol", "bridges"],
};

const root = process.cwd();
const layerOf = (file) => relative(root, file).split("/")[0];
const problems = [];
for (const layer of Object.keys(ALLOWED)) {
  for (const entry of readdirSync(layer, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    const file = join(entry.parentPath ?? entry.path, entry.name);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/^\s*(?:import|export)[^"']*?from\s+["'](\.{1,2}\/[^"']+)["']/gm)) {
      const target = layerOf(normalize(join(root, file, "..", m[1])));
      if (!ALLOWED[layer].includes(target))
        problems.push(`${file}: imports ${m[1]} (${layer} must not import ${target})`);
    }
  }
}
if (problems.length) {
  console.error(`Imports that cross a layer boundary the wrong way:\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log("layers: every import flows one way");
