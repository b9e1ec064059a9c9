// The fastest honest bridge: answers every line with a pong echoing its id. A separate
// process, so the benchmark measures the client, not a bridge sharing its event loop.
import { createServer } from "node:net";

const server = createServer((socket) => {
  socket.setNoDelay(true);
  let pending = "";
  socket.on("data", (chunk) => {
    pending += chunk.toString("utf8");
    let nl: number;
    let out = "";
    while ((nl = pending.indexOf("\n")) !== -1) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const id = JSON.parse(line).id;
      out += `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"ok":true}}\n`;
    }
    if (out) socket.write(out);
  });
  socket.on("error", () => {});
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`READY ${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
