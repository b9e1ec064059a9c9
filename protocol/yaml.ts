// The YAML parser (for the overlay, config files and baselines), loaded on first use: a run
// that reads no YAML starts without it.
import { createRequire } from "node:module";

let lib: typeof import("yaml") | undefined;

export function yaml(): typeof import("yaml") {
  lib ??= createRequire(import.meta.url)("yaml") as typeof import("yaml");
  return lib;
}
