import { execFileSync } from "node:child_process";

// Spawn and packaging tests run the compiled CLI and bridge, so build once first.
export default function setup(): void {
  execFileSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
}
