import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";

/** Where a report goes: a file, or standard output for "-". */
export function writeOutput(file: string, text: string): void {
  if (file === "-") {
    process.stdout.write(text);
    return;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}
