// Streams a line with no LF as fast as the reader takes it (for the memory figure).
import { createServer } from "node:net";

const total = Number(process.argv[2] ?? 256 * 1_048_576);
const server = createServer((socket) => {
  socket.on("error", () => {});
  socket.resume(); // read (and drop) whatever the client sends
  const chunk = Buffer.alloc(1 << 20, 0x61);
  let sent = 0;
  const pump = () => {
    while (sent < total && socket.writable) {
      sent += chunk.length;
      if (!socket.write(chunk)) return;
    }
    if (sent >= total) socket.end();
  };
  socket.on("drain", pump);
  pump();
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`READY ${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
