// The JSON report's schema, shipped beside the reporters: what --merge, --replay and
// --compare accept is checked against it, so a broken file is named instead of crashing a run.
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";

const ajv = new Ajv({ allErrors: true, strict: false });
ajv.addFormat("date-time", (s: string) => /^\d{4}-\d\d-\d\dT/.test(s) && !Number.isNaN(Date.parse(s)));
const validate = ajv.compile(
  JSON.parse(readFileSync(new URL("./report.schema.json", import.meta.url), "utf8")) as object,
);

/** Why a value is not a JSON report of this tool (schemaVersion 1), or undefined when it is one. */
export function reportProblem(value: unknown): string | undefined {
  if (validate(value)) return undefined;
  return ajv.errorsText(validate.errors?.slice(0, 3), { dataVar: "report" });
}
