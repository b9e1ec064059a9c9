// One option's value: text from the command line, or typed from YAML / the API, checked against its spec.
import { suggest } from "./suggest.js";
import { HOUR, OPTIONS, type Spec, specOf } from "./table.js";

/** Bad usage or configuration: exit code 2. */
export class UsageError extends Error {}

/**
 * A value for an option, from the command line (text) or from YAML / the API (typed); `where`
 * names its source. Only the API (`api`) may give a duration as a plain number, in its spec's unit.
 */
export function optionValue(name: string, raw: unknown, where: string, api = false): unknown {
  const spec = specOf(name);
  if (!spec) throw new UsageError(`${where}: unknown option "${name}"${suggest(name, Object.keys(OPTIONS))}`);
  const text = typeof raw === "string";
  const bad = (what: string): never => {
    throw new UsageError(`${where} must be ${what}, not ${JSON.stringify(raw)}`);
  };
  switch (spec.kind) {
    case "boolean":
      return typeof raw === "boolean" ? raw : bad("true or false");
    case "integer":
    case "count": {
      const n = text ? (/^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN) : raw;
      if (spec.kind === "count") {
        return Number.isSafeInteger(n) && (n as number) > 0 ? n : bad("a positive whole number");
      }
      if (spec.min !== undefined)
        return Number.isSafeInteger(n) && (n as number) >= spec.min && (n as number) < 2 ** 31
          ? n
          : bad(`a whole number of at least ${spec.min}`);
      return Number.isSafeInteger(n) && (n as number) >= -(2 ** 31) && (n as number) < 2 ** 31
        ? n
        : bad("a whole number in the 32-bit range");
    }
    case "duration": {
      // A bare number on the command line or in a config file is a unit left out, not milliseconds.
      const bare = text ? /^\s*\d+(?:\.\d+)?\s*$/.test(raw) : typeof raw === "number" && !api;
      if (bare && Number(raw) > 0) {
        const n = String(raw).trim();
        throw new UsageError(`${where} ${n}: add a unit: ${n}s or ${n}ms`);
      }
      const ms = text ? parseDuration(raw) : typeof raw === "number" ? raw * unitMs(spec.unit) : Number.NaN;
      if (!Number.isFinite(ms) || ms <= 0) bad(`a positive time such as 500ms, 2s, 10m or 1h`);
      const max = spec.max ?? 7 * 24 * HOUR;
      if (ms > max) bad(`at most ${max === HOUR ? "1h" : "a week"}`);
      return ms;
    }
    case "list": {
      const items = Array.isArray(raw) ? raw : [raw];
      if (!items.every((v) => typeof v === "string")) bad("a string or a list of strings");
      // Commas separate items, except inside a glob's braces: "wire.{utf8,ndjson},error.*" is two.
      return (items as string[])
        .flatMap((v) => v.split(/,(?![^{]*\})/))
        .map((s) => s.trim())
        .filter(Boolean);
    }
    case "choice":
      return typeof raw === "string" && spec.choices?.includes(raw) ? raw : bad(`one of ${spec.choices?.join(", ")}`);
    case "string":
      return typeof raw === "string" && raw.trim() !== "" ? raw : bad("a non-empty string");
  }
}

const unitMs = (unit: Spec["unit"]) => (unit === "s" ? 1000 : 1);

/** 500ms, 2s, 1.5m, 1h, in ms; text without a unit is not a duration. */
export function parseDuration(text: string): number {
  const m = DURATION.exec(text.trim());
  if (!m) return Number.NaN;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: HOUR }[m[2] as "ms"];
}

/** A time in ms as the options take it: 500ms, 2s, 10m, 1h. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ["h", HOUR],
    ["m", 60_000],
    ["s", 1000],
  ] as const)
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

export const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/;
