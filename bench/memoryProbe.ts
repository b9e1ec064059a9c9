// Child process for the memory figure: idle baseline, or stream 256 MiB both ways through the tool's Connection.
import { Connection } from "../suites/harness/connection.js";

const [mode, port] = [process.argv[2], Number(process.argv[3])];
if (mode === "stream") {
  const conn = await Connection.open("127.0.0.1", port, {
    maxLineBytes: 1_048_576,
    connectTimeoutMs: 5000,
    stallTimeoutMs: 30_000,
  });
  const chunk = Buffer.alloc(1 << 20, 0x62);
  const writing = (async () => {
    for (let i = 0; i < 256 && (await conn.write(chunk)); i++);
  })();
  let results = 0;
  for (;;) {
    const r = await conn.read(30_000);
    results++;
    if (r.kind === "closed" || r.kind === "reset" || r.kind === "timeout") break;
  }
  await writing;
  conn.close();
  if (results < 2) throw new Error("the stream produced no oversized report");
} else {
  await new Promise((resolve) => setTimeout(resolve, 300));
}
process.stdout.write(`${JSON.stringify({ maxRssKiB: process.resourceUsage().maxRSS })}\n`);
