// The import-boundary check: data and imports flow one way,
//   protocol <- generators <- suites <- runner -> reports,   bridges on protocol alone,
// and nothing imports the runner but the entry points (bin.ts, index.ts), bench and tests; and no
// module reaches itself again through its imports (an import circle), anywhere in the tree, type
// imports included. Exits 1 naming every import that crosses a boundary the wrong way and every circle.
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
const SKIPPED = new Set(["node_modules", "dist", ".git"]);

const root = process.cwd();
const layerOf = (file) => relative(root, file).split("/")[0];

/** Every .ts file under `dir` (relative to the root), skipping installed and built trees. */
function sources(dir) {
  const out = [];
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...sources(path));
    else if (entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** The relative modules a file imports: static imports, re-exports and dynamic imports alike. */
function importsOf(file) {
  const text = readFileSync(join(root, file), "utf8");
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)[^"'()]*?from\s+["'](\.{1,2}\/[^"']+)["']/gm),
    ...text.matchAll(/^\s*import\s+["'](\.{1,2}\/[^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g),
  ].map((m) => m[1]);
  return specs.map((spec) => ({ spec, file: normalize(join(file, "..", spec)).replace(/\.js$/, ".ts") }));
}

const files = sources("");
const graph = new Map(files.map((file) => [file, importsOf(file)]));
const problems = [];

for (const [file, imports] of graph) {
  const layer = layerOf(join(root, file));
  if (!(layer in ALLOWED)) continue;
  for (const { spec, file: target } of imports) {
    const to = layerOf(join(root, target));
    if (!ALLOWED[layer].includes(to)) problems.push(`${file}: imports ${spec} (${layer} must not import ${to})`);
  }
}

/** The import circles: each strongly connected set of modules (Tarjan's algorithm), as one path round it. */
function circles() {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (file) => {
    index.set(file, index.size);
    low.set(file, index.get(file));
    stack.push(file);
    onStack.add(file);
    for (const { file: next } of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file), low.get(next)));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file), index.get(next)));
    }
    if (low.get(file) !== index.get(file)) return;
    const members = [];
    for (let m = stack.pop(); ; m = stack.pop()) {
      onStack.delete(m);
      members.push(m);
      if (m === file) break;
    }
    const selfImport = (graph.get(file) ?? []).some((i) => i.file === file);
    if (members.length > 1 || selfImport) found.push(pathRound(new Set(members), file));
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** A shortest way from `start` back to itself inside a circle's modules. */
function pathRound(members, start) {
  const from = new Map([[start, undefined]]);
  const queue = [start];
  while (queue.length) {
    const file = queue.shift();
    for (const { file: next } of graph.get(file) ?? []) {
      if (next === start) {
        const path = [start];
        for (let at = file; at !== start; at = from.get(at)) path.splice(1, 0, at);
        return [...path, start].join(" -> ");
      }
      if (members.has(next) && !from.has(next)) {
        from.set(next, file);
        queue.push(next);
      }
    }
  }
  return start;
}

const circular = circles();
if (problems.length) console.error(`Imports that cross a layer boundary the wrong way:\n  ${problems.join("\n  ")}`);
if (circular.length) console.error(`Import circles (a module reaches itself again):\n  ${circular.join("\n  ")}`);
if (problems.length || circular.length) process.exit(1);
console.log("layers: every import flows one way, and no import circle");
