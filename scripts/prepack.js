// Before `npm pack`, `npm publish` and an install from the git repository: a clean build, so the
// tarball holds dist/ as the sources make it now (no stale file of a module since removed).
import { execFileSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";

if (!existsSync("node_modules/typescript")) {
  console.error("npm pack builds dist/ first and needs the dev dependencies: run `npm ci`, then `npm pack`.");
  process.exit(1);
}
rmSync("dist", { recursive: true, force: true });
execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
