// Where a run writes: report files and output folders, each checked before any connection, so a
// run is never lost to a typo or an unwritable path found only after the checks ran.
import { closeSync, existsSync, openSync, rmdirSync, statSync, unlinkSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { FORMATS } from "../reports/index.js";
import { makeDirectory } from "../reports/output.js";
import type { OptionValues } from "./cli/options/table.js";
import { UsageError } from "./cli/options/value.js";
import { fileProblem } from "./files.js";

type Values = Partial<OptionValues>;

/** Every report asked for, by format and file: --json FILE ... and --report FORMAT=FILE. */
export function reportOutputs(values: Values): { format: string; file: string }[] {
  const outputs = Object.keys(FORMATS).flatMap((format) => {
    const file = values[format as "json"];
    return typeof file === "string" ? [{ format, file }] : [];
  });
  for (const entry of values.report ?? []) {
    const m = /^([a-z]+)=(.+)$/.exec(entry);
    if (!m || !(m[1]! in FORMATS)) {
      throw new UsageError(
        `--report takes FORMAT=FILE with FORMAT one of ${Object.keys(FORMATS).join(", ")}, not "${entry}"`,
      );
    }
    outputs.push({ format: m[1]!, file: m[2]! });
  }
  if (outputs.filter((o) => o.file === "-").length > 1) throw new UsageError("only one report can go to stdout (-)");
  return outputs;
}

/** Every report file can be written, checked before any connection: a run is never lost to a typo. */
export function checkWritable(outputs: { format: string; file: string }[]): void {
  for (const { format, file } of outputs) {
    if (file === "-") continue;
    const path = resolve(file);
    let existed = true;
    try {
      if (statSync(path).isDirectory())
        throw new UsageError(`cannot write the ${format} report to ${file}: it is a directory`);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      existed = false;
    }
    try {
      makeDirectory(dirname(path));
      closeSync(openSync(path, "a"));
      if (!existed) unlinkSync(path);
    } catch (err) {
      throw new UsageError(`cannot write the ${format} report to ${file}: ${fileProblem(err)}`);
    }
  }
}

/** The folders a run writes into (--export, --save-failures) can be made and written, as report files are. */
export function checkDirectories(values: Values): void {
  const folders = { export: values.export, "save-failures": values.saveFailures };
  for (const [flag, dir] of Object.entries(folders)) {
    if (dir !== undefined) checkDirectory(dir, `--${flag}`);
  }
}

function checkDirectory(dir: string, flag: string): void {
  const path = resolve(dir);
  const made: string[] = [];
  for (let d = path; !existsSync(d) && dirname(d) !== d; d = dirname(d)) made.unshift(d);
  try {
    if (existsSync(path) && !statSync(path).isDirectory())
      throw new UsageError(`${flag} ${dir}: it is not a directory`);
    makeDirectory(path);
    const probe = join(path, `.aicontrol-conformance-${process.pid}`);
    closeSync(openSync(probe, "w"));
    unlinkSync(probe);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${flag} ${dir}: cannot write there: ${fileProblem(err)}`);
  } finally {
    // Folders made only to try them are taken away again; the run makes them when it writes.
    for (const d of made.reverse()) {
      try {
        rmdirSync(d);
      } catch {
        /* not made, or not empty */
      }
    }
  }
}
