// tsc copies no data files: put the contract, its overlay, the report schema, the per-check cost table
// (written by `npm run bench`, read by the scheduler) and the reproducers' Python runtime next to their compiled
// code; and the Python bridge, which reads the contract from ../../protocol as it does in the source tree.
import { copyFileSync, mkdirSync } from "node:fs";

mkdirSync("dist/bridges/python", { recursive: true });
for (const file of [
  "protocol/AiControlProtocol.json",
  "protocol/overlay.yaml",
  "reports/report.schema.json",
  "runner/check-costs.json",
  "bridges/python/bridge.py",
  "runner/reproducer.py",
  "runner/reproducer_wire.py",
  "runner/reproducer_ledger.py",
  "runner/reproducer_events.py",
  "runner/reproducer_oracles.py",
]) {
  copyFileSync(file, `dist/${file}`);
}
