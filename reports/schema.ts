// The JSON report's schema, shipped beside the reporters: what --merge, --replay and
// --compare accept is checked against it, so a broken file is named instead of crashing a run.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Ajv as AjvType, ValidateFunction } from "ajv";

// Compiled on first use: most runs read no report, and loading the validator is a good part of start-up.
let compiled: { ajv: AjvType; validate: ValidateFunction } | undefined;
function validator() {
  if (compiled) return compiled;
  const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
  const ajv = new Ajv({ allErrors: true, strict: false });
  ajv.addFormat("date-time", (s: string) => /^\d{4}-\d\d-\d\dT/.test(s) && !Number.isNaN(Date.parse(s)));
  const schema = JSON.parse(readFileSync(new URL("./report.schema.json", import.meta.url), "utf8")) as object;
  compiled = { ajv, validate: ajv.compile(schema) };
  return compiled;
}

/** Why a value is not a JSON report of this tool (schemaVersion 1), or undefined when it is one. */
export function reportProblem(value: unknown): string | undefined {
  const { ajv, validate } = validator();
  if (validate(value)) return undefined;
  return ajv.errorsText(validate.errors?.slice(0, 3), { dataVar: "report" });
}
