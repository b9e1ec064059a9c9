// tsc copies no data files: put the contract, its overlay, the report schema and the per-check cost table
// (written by `npm run bench`, read by the scheduler) next to their compiled code.
import { copyFileSync } from "node:fs";

for (const file of [
  "protocol/AiControlProtocol.json",
  "protocol/overlay.yaml",
  "reports/report.schema.json",
  "runner/check-costs.json",
]) {
  copyFileSync(file, `dist/${file}`);
}
