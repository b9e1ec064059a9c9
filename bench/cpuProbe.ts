// Loaded into a CLI run with --import: writes the process's CPU time (user + system, in ms) to the
// file named by AICONTROL_BENCH_CPU as it exits, so the bench can tell a check's CPU from its waits.
import { writeFileSync } from "node:fs";

const file = process.env.AICONTROL_BENCH_CPU;
if (file)
  process.on("exit", () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, String((user + system) / 1000));
  });
