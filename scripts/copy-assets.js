// tsc copies no data files: put the contract next to its compiled loader.
import { copyFileSync } from "node:fs";
copyFileSync("protocol/contract.yaml", "dist/protocol/contract.yaml");
