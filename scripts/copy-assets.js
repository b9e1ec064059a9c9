// tsc copies no data files: put the contract, its overlay and the report schema next to their compiled code.
import { copyFileSync } from "node:fs";

for (const file of ["protocol/AiControlProtocol.json", "protocol/overlay.yaml", "reports/report.schema.json"]) {
  copyFileSync(file, `dist/${file}`);
}
