// --help, from the option table and the exit codes.
import { EXIT_CODES } from "./exit-codes.js";
import { OPTIONS, type Spec } from "./table.js";
import { formatDuration } from "./value.js";

/** --help, from the table. */
export function usage(): string {
  const lines = [
    "Usage: aicontrol-conformance [options]            (default target: the built-in reference bridge)",
    '       aicontrol-conformance --endpoint HOST:PORT | --spawn "CMD ..." [options]',
    '       aicontrol-conformance client --exec "CMD {host} {port} {timeout} ..." [options]',
    "       aicontrol-conformance --merge shard1.json ... shardN.json [--json FILE]",
    "       aicontrol-conformance --compare OLD.json NEW.json",
  ];
  let group = "";
  for (const [name, spec] of Object.entries(OPTIONS as Record<string, Spec>)) {
    if (spec.group !== group) {
      group = spec.group;
      lines.push("", group);
    }
    const flag = `${spec.short ? `-${spec.short}, ` : ""}--${name}${spec.arg ? ` ${spec.arg}` : spec.kind === "duration" ? " TIME" : spec.kind === "choice" ? ` ${spec.choices?.join("|")}` : ""}`;
    const dflt =
      spec.default !== undefined && spec.kind !== "choice"
        ? ` (default ${spec.kind === "duration" ? formatDuration(spec.default as number) : spec.default})`
        : spec.kind === "choice"
          ? ` (default ${spec.default})`
          : "";
    lines.push(`  ${flag.padEnd(28)} ${spec.description}${dflt}`);
  }
  lines.push("", "Durations take a unit: 500ms, 2s, 1.5m, 1h.", "", "Exit codes:");
  for (const [code, meaning] of EXIT_CODES) lines.push(`  ${String(code).padEnd(4)} ${meaning}`);
  return lines.join("\n");
}
