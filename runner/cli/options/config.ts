// The YAML config file: option names to values, each with the line it stands on.
import { readFileSync } from "node:fs";
import { yaml } from "../../../protocol/yaml.js";
import { fileProblem } from "../../files.js";
import { suggest } from "./suggest.js";
import { OPTIONS, type Spec, specOf } from "./table.js";
import { UsageError } from "./value.js";

/** A YAML config: option name -> value and the line it stands on. Tokens are never read from a file. */
export function readConfig(file: string): Record<string, { value: unknown; line: number }> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read config ${file}: ${fileProblem(err)}`);
  }
  const { isMap, isScalar, LineCounter, parseDocument } = yaml();
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    throw new UsageError(`${file}:${e.linePos?.[0].line ?? "?"}: not valid YAML: ${e.message.split("\n")[0]}`);
  }
  if (doc.contents === null) return {};
  if (!isMap(doc.contents)) throw new UsageError(`${file}: must be a YAML mapping of option names to values`);
  const out: Record<string, { value: unknown; line: number }> = {};
  for (const pair of doc.contents.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : "";
    const line = lines.linePos((pair.key as { range?: number[] } | null)?.range?.[0] ?? 0).line;
    if (key === "token") {
      throw new UsageError(
        `${file}:${line}: a token is never read from a file; put it in an environment variable and name it with token-env`,
      );
    }
    const spec = specOf(key);
    if (!spec || spec.cliOnly)
      throw new UsageError(`${file}:${line}: unknown option "${key}"${suggest(key, configKeys())}`);
    const node = pair.value as { toJSON?: () => unknown } | null;
    out[key] = { value: isScalar(node) ? node.value : doc.createNode(node).toJSON(), line };
  }
  return out;
}

const configKeys = () =>
  Object.entries(OPTIONS as Record<string, Spec>)
    .filter(([, s]) => !s.cliOnly)
    .map(([n]) => n);
