// Watch mode, a bridge author's edit-run loop: run, wait for a change to the bridge's sources,
// run again against a freshly started bridge with the rules that failed last time first.
import { type FSWatcher, statSync, watch as watchFiles } from "node:fs";
import { relative, resolve, sep } from "node:path";
import type { RuleId } from "../protocol/contract.js";
import type { Report } from "../reports/types.js";
import { UsageError } from "./cli/options/value.js";

/** Quiet time after the last change before a run starts: an editor's save is several events. */
const SETTLE_MS = 150;

export interface WatchOptions {
  dir: string;
  /** Files this tool writes (reports, saved failures): a change there is not an edit. */
  ownFiles: string[];
  signal?: AbortSignal;
  say: (line: string) => void;
}

/** The folder to watch, checked before the first run: exit 2 naming it when it is not one. */
export function watchedDir(dir: string): string {
  const path = resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    /* reported below */
  }
  if (!isDir) throw new UsageError(`--watch ${dir}: no such folder`);
  return path;
}

/**
 * Runs `once` until interrupted, again after each change under the folder. Returns the last
 * run's exit code (130 when a run itself was interrupted).
 */
export async function watchLoop(
  once: (first: ReadonlySet<RuleId>) => Promise<{ code: number; report?: Report }>,
  options: WatchOptions,
): Promise<number> {
  const own = options.ownFiles.map((f) => resolve(f));
  let first: ReadonlySet<RuleId> = new Set();
  for (;;) {
    const outcome = await once(first);
    if (options.signal?.aborted) return outcome.code;
    if (outcome.report) first = failedRules(outcome.report);
    const failing = first.size;
    const changed = await nextChange(options.dir, own, options.signal, () =>
      options.say(
        `watching ${options.dir} for changes (Ctrl-C to stop)${failing ? `; ${failing} failing rule(s) will run first` : ""}`,
      ),
    );
    if (!changed) return outcome.code;
    options.say(`${changed} changed: restarting the bridge and running again`);
  }
}

function failedRules(report: Report): Set<RuleId> {
  const prefix = `${report.rules[0]?.id.split(".")[0] ?? ""}.`;
  return new Set(
    report.rules
      .filter((r) => r.verdict === "fail" || r.verdict === "error")
      .map((r) => (r.id.startsWith(prefix) ? r.id.slice(prefix.length) : r.id)),
  );
}

/**
 * Resolves with the first changed file (relative to the folder) once changes settle, or undefined
 * when interrupted. `watching` is called once the watcher is in place: an edit made after the user
 * is told "watching" must not be missed, and the watcher takes as existing whatever it finds while
 * it starts.
 */
function nextChange(
  dir: string,
  own: string[],
  signal: AbortSignal | undefined,
  watching: () => void,
): Promise<string | undefined> {
  return new Promise((resolvePromise) => {
    let watcher: FSWatcher | undefined;
    let timer: NodeJS.Timeout | undefined;
    let changed: string | undefined;
    const finish = (value: string | undefined) => {
      clearTimeout(timer);
      watcher?.close();
      signal?.removeEventListener("abort", onAbort);
      resolvePromise(value);
    };
    const onAbort = () => finish(undefined);
    if (signal?.aborted) return finish(undefined);
    signal?.addEventListener("abort", onAbort);
    watcher = watchFiles(dir, { recursive: true }, (_event, name) => {
      if (!name) return;
      const path = resolve(dir, name.toString());
      const parts = relative(dir, path).split(sep);
      // The tool's own reports, version control and installed packages are not the bridge's sources.
      if (
        own.some((o) => path === o || path.startsWith(o + sep)) ||
        parts.some((p) => p.startsWith(".") || p === "node_modules")
      )
        return;
      changed ??= relative(dir, path);
      clearTimeout(timer);
      timer = setTimeout(() => finish(changed), SETTLE_MS);
    });
    try {
      watching();
    } catch (err) {
      finish(undefined); // a watcher left open would keep the process alive
      throw err;
    }
  });
}
