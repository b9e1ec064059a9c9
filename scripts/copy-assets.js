// tsc copies no data files: put the contract, its overlay, the report schema, the per-check cost table
// (written by `npm run bench`, read by the scheduler) and the reproducers' Python runtime next to their compiled code.
import { copyFileSync } from "node:fs";

for (const file of [
  "protocol/AiControlProtocol.json",
  "protocol/overlay.yaml",
  "reports/report.schema.json",
  "runner/check-costs.json",
  "runner/reproducer.py",
]) {
  copyFileSync(file, `dist/${file}`);
}
