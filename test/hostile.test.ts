import { mkdtempSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import { cli, readReport } from "./helpers.js";
import { lineServer, rawServer } from "./servers.js";

// Bridges that are, on purpose, as wrong as a bridge can be. For each: the run ends (the
// test timeout catches a hang), a report is written, and the verdicts say what happened.

const dir = mkdtempSync(join(tmpdir(), "aicc-hostile-"));
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

let n = 0;
async function runAgainst(port: number, extra: string[] = []) {
  const json = join(dir, `r${++n}.json`);
  const { code, out, err } = await cli([
    "--endpoint",
    `127.0.0.1:${port}`,
    "--timeout",
    "250ms",
    "--profile",
    "quick",
    "--json",
    json,
    ...extra,
  ]);
  const report = readReport(json);
  expect(report.rules).toHaveLength(contract.rules.length);
  const verdict = (id: string) => report.rules.find((r) => r.id === `ai-control-protocol.${id}`)!.verdict;
  return { code, out, err, report, verdict };
}

async function hostile(onConnection: (socket: Socket) => void) {
  const s = await rawServer(onConnection);
  closers.push(s.close);
  return s.port;
}

const pong = (line: string) => {
  try {
    return (
      JSON.stringify({ jsonrpc: "2.0", id: (JSON.parse(line) as { id?: unknown }).id ?? null, result: { ok: true } }) +
      "\n"
    );
  } catch {
    return undefined;
  }
};

describe("the runner survives hostile bridges", () => {
  it("one that accepts and never answers", async () => {
    const port = await hostile(() => {});
    const r = await runAgainst(port);
    expect(r.code).toBe(1);
    expect(r.verdict("method.ping")).toBe("fail");
    expect(r.verdict("wire.utf8")).toBe("error");
    expect(r.out).toMatch(/gave no answer to ping/);
  });

  it("one that answers one byte at a time, slowly", async () => {
    const port = await hostile((s) => {
      s.on("data", () => {
        const bytes = Buffer.from('{"jsonrpc":"2.0","id":"ping","result":{"ok":true}}\n');
        let i = 0;
        const t = setInterval(
          () => (i < bytes.length && s.writable ? s.write(bytes.subarray(i, ++i)) : clearInterval(t)),
          100,
        );
        s.on("close", () => clearInterval(t));
      });
    });
    const r = await runAgainst(port);
    expect(r.code).toBe(1);
    expect(r.verdict("method.ping")).toBe("fail");
  });

  it("one that sends an endless line without LF", async () => {
    const port = await hostile((s) => {
      const chunk = Buffer.alloc(65_536, 0x61);
      const pump = () => {
        while (s.writable && s.write(chunk));
      };
      s.on("drain", pump);
      pump();
    });
    const r = await runAgainst(port, ["--rules", "method.ping,wire.line-limit"]);
    expect(r.code).toBe(1);
    expect(r.verdict("wire.line-limit")).toBe("fail");
  });

  it("one that answers with a 100 MiB line", async () => {
    const port = await hostile((s) =>
      s.once("data", () => {
        let left = 100 * 1_048_576;
        const chunk = Buffer.alloc(1_048_576, 0x20);
        const pump = () => {
          while (left > 0 && s.writable) {
            left -= chunk.length;
            if (!s.write(chunk)) return;
          }
          if (left <= 0) s.end("\n");
        };
        s.on("drain", pump);
        pump();
      }),
    );
    const r = await runAgainst(port, ["--rules", "method.ping"]);
    expect(r.code).toBe(1);
    // The line limit is not selected: no verdict on it, but a note under the rule the check ran for.
    expect(r.verdict("wire.line-limit")).toBe("skip");
    expect(r.verdict("method.ping")).toBe("error");
    expect(r.report.rules.find((x) => x.id.endsWith("method.ping"))!.notes?.[0]).toMatch(/on wire.line-limit/);
  });

  it("one that answers every line with a 100 MiB line: each is judged at the limit, not read to its end", async () => {
    const MiB = 1_048_576;
    const chunk = Buffer.alloc(MiB, 0x20);
    const port = await hostile((s) => {
      let owed = 0; // lines to answer, each with 100 MiB and an LF
      let left = 0;
      const pump = () => {
        while (s.writable && (left > 0 || owed > 0)) {
          if (left === 0) {
            owed--;
            left = 100;
          }
          left--;
          const ok = s.write(left === 0 ? Buffer.concat([chunk, Buffer.from("\n")]) : chunk);
          if (!ok) return;
        }
      };
      s.on("drain", pump);
      s.on("data", (d: Buffer) => {
        for (let at = d.indexOf(0x0a); at !== -1; at = d.indexOf(0x0a, at + 1)) owed++;
        pump();
      });
    });
    const r = await runAgainst(port);
    expect(r.code).toBe(1);
    expect(r.verdict("wire.line-limit")).toBe("fail");
    // Every line sent got at most one reply read, and each was read only up to the limit (in 64 KiB reads).
    const { lines, bytesReceived } = r.report.wire!;
    expect(lines).toBeGreaterThan(0);
    expect(bytesReceived).toBeLessThanOrEqual(lines * (MiB + 64 * 1024));
  });

  it("one that sends binary garbage", async () => {
    const port = await hostile((s) => s.on("data", () => s.write(Buffer.from([0xff, 0x00, 0xc3, 0x28, 0x0a]))));
    const r = await runAgainst(port);
    expect(r.code).toBe(1);
    expect(r.verdict("wire.utf8")).toBe("fail");
  });

  it("one that closes every connection at once", async () => {
    const port = await hostile((s) => s.end());
    const r = await runAgainst(port);
    expect(r.code).toBe(1);
    expect(r.verdict("method.ping")).toBe("fail");
  });

  it("one that resets in the middle of a response", async () => {
    const port = await hostile((s) => s.on("data", () => s.write('{"jsonrpc":"2.0","id"', () => s.resetAndDestroy())));
    const r = await runAgainst(port);
    expect(r.code).toBe(1);
    expect(r.verdict("method.ping")).toBe("fail");
  });

  it("one that refuses connections: exit 3", async () => {
    const s = await rawServer(() => {});
    await s.close();
    const r = await runAgainst(s.port);
    expect(r.code).toBe(3);
    expect(r.verdict("wire.ndjson")).toBe("error");
  });

  it("one that accepts but never reads, so the tool's writes back up", async () => {
    const port = await hostile((s) => s.pause());
    const r = await runAgainst(port, ["--rules", "method.ping,wire.line-limit"]);
    expect(r.code).toBe(1);
    expect(r.verdict("method.ping")).toBe("fail");
  });

  it("one that sends unsolicited extra lines", async () => {
    const s = await lineServer((line) => `${pong(line) ?? ""}{"jsonrpc":"2.0","method":"tick","params":{}}\n`);
    closers.push(s.close);
    const r = await runAgainst(s.port);
    expect(r.code).toBe(1);
    expect(r.verdict("wire.ndjson") === "fail" || r.verdict("wire.response-envelope") === "fail").toBe(true);
  });

  it("one that answers with another request's id", async () => {
    let previous: unknown = 0;
    const s = await lineServer((line) => {
      const id = (() => {
        try {
          return (JSON.parse(line) as { id?: unknown }).id;
        } catch {
          return null;
        }
      })();
      const out = `${JSON.stringify({ jsonrpc: "2.0", id: previous, result: { ok: true, authorized: true } })}\n`;
      previous = id;
      return out;
    });
    closers.push(s.close);
    const r = await runAgainst(s.port);
    expect(r.code).toBe(1);
    expect(r.verdict("wire.response-envelope")).toBe("fail");
  });

  it("one that dies halfway through a run", async () => {
    let requests = 0;
    const s = await lineServer((line) => {
      if (++requests === 40) void s.close();
      return pong(line);
    });
    closers.push(async () => {});
    const r = await runAgainst(s.port, ["--rules", "method.ping,wire.*"]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/stopped accepting connections/);
  });
});
