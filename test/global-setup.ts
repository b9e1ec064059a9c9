import { execSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { resolve } from "node:path";

/** What tsc knew of the last build, kept out of dist/ so that no package holds it. */
const BUILD_INFO = "node_modules/.cache/aicontrol-conformance/build.tsbuildinfo";

// Spawn and packaging tests run the compiled CLI and bridge, so build once first: the steps of `npm run build`, its
// tsc incremental, which recompiles only what changed since the last build (a few seconds instead of a whole build
// before any test starts). Without dist/, what tsc knew is forgotten, so it compiles everything again.
export default function setup(): void {
  if (!existsSync("dist/bin.js")) rmSync(BUILD_INFO, { force: true });
  const build = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: { build: string } }).scripts.build;
  for (const step of build.split(" && ")) {
    const command = step.startsWith("tsc ") ? `${step} --incremental --tsBuildInfoFile ${BUILD_INFO}` : step;
    execSync(command, {
      stdio: "inherit",
      env: { ...process.env, PATH: `${resolve("node_modules/.bin")}:${process.env.PATH}` },
    });
  }
}
