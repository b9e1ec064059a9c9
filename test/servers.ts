import { createServer, type Server, type Socket } from "node:net";

/** A loopback server whose every connection runs `onConnection`: the raw material of hostile bridges. */
export async function rawServer(
  onConnection: (socket: Socket) => void,
): Promise<{ port: number; server: Server; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Answers each request line with `answer(line)` (a string written as is). */
export function lineServer(answer: (line: string, socket: Socket) => string | undefined) {
  return rawServer((socket) => {
    let buffer = "";
    socket.on("data", (d) => {
      buffer += d.toString("utf8");
      let nl: number;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const out = answer(line, socket);
        if (out !== undefined && socket.writable) socket.write(out);
      }
    });
  });
}
