import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = process.cwd();
const work = mkdtempSync(join(tmpdir(), "aicc-clone-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * The files a clone of this repository holds (tracked, and new files not ignored, as they stand
 * in the worktree): no dist/, no node_modules. The dev dependencies a clone gets from `npm ci`
 * are linked from the worktree's, which `npm ci` installed from the same lockfile.
 */
function cloneTree(to: string): void {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
  })
    .split("\0")
    .filter((f) => f && existsSync(join(root, f)));
  for (const file of files) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(join(root, file), join(to, file));
  }
  symlinkSync(join(root, "node_modules"), join(to, "node_modules"));
}

describe("a package packed from a fresh clone", () => {
  // A clean build from nothing (tsc) is most of it: about 30 s alone, longer beside a whole suite on 2 cores.
  it("builds itself, holds what the command needs and no tests, and runs a quick profile once installed", {
    timeout: 240_000,
  }, () => {
    const clone = join(work, "clone");
    cloneTree(clone);
    expect(existsSync(join(clone, "dist"))).toBe(false);
    const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", work], {
      cwd: clone,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    })
      .trim()
      .split("\n")
      .at(-1)!;
    const listing = execFileSync("tar", ["-tzf", join(work, tarball)], { encoding: "utf8" }).split("\n");
    for (const file of [
      "dist/bin.js",
      "dist/index.js",
      "dist/protocol/contract.compiled.json",
      "README.md",
      "docs/cli.md",
    ])
      expect(listing).toContain(`package/${file}`);
    expect(listing.filter((f) => /^package\/(test|dist\/test|dist\/bench|scripts)\//.test(f))).toEqual([]);
    expect(listing.filter((f) => /\.test\.|\.ts$/.test(f) && !f.endsWith(".d.ts"))).toEqual([]);

    const project = join(work, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "gate", version: "1.0.0", private: true }));
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--silent", join(work, tarball)], {
      cwd: project,
      stdio: "pipe",
    });
    const out = execFileSync("npx", ["aicontrol-conformance", "--profile", "quick"], {
      cwd: project,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, npm_lifecycle_event: "", CI: "1" },
    });
    expect(out).toMatch(/^\d+ rules: \d+ pass, 0 fail, 0 warn, 0 error/m);
  });

  it("says what to do when the dev dependencies are missing, instead of packing a command that cannot start", () => {
    const bare = join(work, "bare");
    cloneTree(bare);
    rmSync(join(bare, "node_modules"));
    let message = "";
    try {
      execFileSync("npm", ["pack", "--silent", "--pack-destination", work], { cwd: bare, stdio: "pipe" });
    } catch (err) {
      message = String((err as { stderr: Buffer }).stderr);
    }
    expect(message).toContain("run `npm ci`, then `npm pack`");
  });
});
