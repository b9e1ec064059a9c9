// tsc copies no data files: put the contract and the report schema next to their compiled code.
import { copyFileSync } from "node:fs";
copyFileSync("protocol/contract.yaml", "dist/protocol/contract.yaml");
copyFileSync("reports/report.schema.json", "dist/reports/report.schema.json");
