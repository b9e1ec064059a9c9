// The build's last step: the shipped contract joined with its overlay and validated once, so a
// run starts without parsing YAML or loading the schema validator (see protocol/contract.ts).
import { compileContract } from "../dist/protocol/contract.js";

compileContract();
