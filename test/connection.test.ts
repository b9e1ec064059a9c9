import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { contract } from "../protocol/contract.js";
import { describeReply, fail, pass } from "../suites/harness/check.js";
import { ConnectError, Connection, WireStats } from "../suites/harness/connection.js";
import { Harness } from "../suites/harness/harness.js";
import { REDACTED, redactor } from "../suites/harness/redact.js";
import { until } from "./helpers.js";
import { lineServer, rawServer } from "./servers.js";

const MiB = 1_048_576;
const opts = { maxLineBytes: MiB, connectTimeoutMs: 1000 };
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

async function serve(onConnection: Parameters<typeof rawServer>[0]) {
  const s = await rawServer(onConnection);
  closers.push(s.close);
  return s.port;
}
const open = (port: number, extra = {}) => Connection.open("127.0.0.1", port, { ...opts, ...extra });
const text = (r: Awaited<ReturnType<Connection["read"]>>) => (r.kind === "line" ? r.bytes.toString("utf8") : r.kind);

describe("Connection on real loopback sockets", () => {
  it("joins a line split over many writes", async () => {
    const port = await serve((s) => {
      const line = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"ok":true}}\n');
      let i = 0;
      const drip = setInterval(() => {
        if (i < line.length) s.write(line.subarray(i, ++i));
        else clearInterval(drip);
      }, 1);
      s.on("close", () => clearInterval(drip));
    });
    const conn = await open(port);
    expect(text(await conn.read(3000))).toBe('{"jsonrpc":"2.0","id":1,"result":{"ok":true}}');
    conn.close();
  });

  it("splits two lines that arrive in one read", async () => {
    const port = await serve((s) => s.write("first\nsecond\n"));
    const conn = await open(port);
    expect(text(await conn.read(1000))).toBe("first");
    expect(text(await conn.read(1000))).toBe("second");
    conn.close();
  });

  it("judges a response line over 1 MiB as soon as it passes the limit, and reads no further", async () => {
    // 100 MiB and then a line: what counts is what the tool read, not how long it took.
    const port = await serve((s) => {
      let left = 100;
      const chunk = Buffer.alloc(MiB, 0x61);
      const pump = () => {
        while (left > 0 && s.writable) {
          left--;
          if (!s.write(chunk)) return;
        }
        if (left === 0 && s.writable) s.end("\nnext\n");
      };
      s.on("drain", pump);
      s.on("error", () => {});
      pump();
    });
    const stats = new WireStats();
    const conn = await open(port, { stats });
    const first = await conn.read(10_000);
    expect(first.kind).toBe("oversized");
    expect(first.kind === "oversized" && first.bytes).toBeGreaterThan(MiB);
    // The connection is closed there: nothing after the limit is read, the rest of the line nor the next one.
    expect((await conn.read(3000)).kind).toBe("closed");
    expect(stats.bytesReceived).toBeLessThan(MiB + 256 * 1024);
    expect(conn.transcript.entries().some((e) => e.text?.startsWith("received a line over"))).toBe(true);
    conn.close();
  });

  it("accepts a line of exactly 1 MiB", async () => {
    const port = await serve((s) => s.write(Buffer.concat([Buffer.alloc(MiB, 0x61), Buffer.from("\n")])));
    const conn = await open(port);
    const r = await conn.read(3000);
    expect(r.kind === "line" && r.bytes.length).toBe(MiB);
    conn.close();
  });

  it("gives back every byte of a line it holds as text, byte order mark and four-byte characters included", async () => {
    const sent = [
      Buffer.from('\ufeff{"id":"\u00e9\u4e2d\ud83d\ude00"}', "utf8"), // short, strict UTF-8: held as text
      Buffer.from([0x7b, 0xed, 0xa0, 0x80, 0x7d]), // a surrogate encoded as UTF-8 (CESU): not strict, held as bytes
      Buffer.from([0x22, 0xf0, 0x9f, 0x98]), // cut inside a four-byte character
      Buffer.alloc(5000, "\u00e9"), // long: held as bytes
    ];
    const port = await serve((s) => s.write(Buffer.concat(sent.flatMap((b) => [b, Buffer.from("\n")]))));
    const conn = await open(port);
    await conn.write(`${sent[0]!.toString("utf8")}\n`); // the transcript keeps a byte order mark we send, too
    const lines = [];
    for (const _ of sent) lines.push(await conn.read(1000));
    expect(lines.map((r) => r.kind === "line" && r.text !== undefined)).toEqual([true, false, false, false]);
    expect(lines.map((r) => (r.kind === "line" ? r.bytes.toString("hex") : r.kind))).toEqual(
      sent.map((b) => b.toString("hex")),
    );
    const [send, recv] = ["send", "recv"].map((dir) => conn.transcript.entries().find((e) => e.dir === dir)!);
    expect([send!.text, recv!.text]).toEqual([`${sent[0]!.toString("utf8")}\n`, `${sent[0]!.toString("utf8")}\n`]);
    conn.close();
  });

  it("times out when nothing comes", async () => {
    const port = await serve(() => {});
    const conn = await open(port);
    const t0 = Date.now();
    expect((await conn.read(150)).kind).toBe("timeout");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    conn.close();
  });

  it("ends every wait at the deadline, however long the timeout", async () => {
    const port = await serve(() => {});
    const conn = await open(port, { deadline: Date.now() + 100 });
    expect((await conn.read(60_000)).kind).toBe("timeout");
    conn.close();
  });

  it("reports a close in the middle of a line, with the partial bytes", async () => {
    const port = await serve((s) => {
      s.write('{"jsonrpc":"2.0",');
      s.end();
    });
    const conn = await open(port);
    const r = await conn.read(1000);
    expect(r).toMatchObject({ kind: "closed", partial: 17 });
    expect(conn.transcript.entries().some((e) => e.dir === "recv" && e.text === '{"jsonrpc":"2.0",')).toBe(true);
  });

  it("keeps a line sent just before a reset", async () => {
    const port = await serve((s) => setTimeout(() => s.write("last words\n", () => s.resetAndDestroy()), 30));
    const conn = await open(port);
    expect(text(await conn.read(1000))).toBe("last words");
    const r = await conn.read(1000);
    expect(["reset", "closed"]).toContain(r.kind);
  });

  it("gives up a write the peer never reads, within the stall timeout", async () => {
    const port = await serve((s) => s.pause());
    const conn = await open(port, { stallTimeoutMs: 200 });
    const ok = await conn.write(Buffer.alloc(64 * MiB));
    expect(ok).toBe(false);
    conn.close();
  });

  it("records a transcript with the token redacted, and binary as base64", async () => {
    const port = await serve((s) => s.write(Buffer.from([0xff, 0xfe, 0x0a])));
    const conn = await open(port, { redact: redactor("s3cret").bytes });
    await conn.write('{"token":"s3cret"}\n');
    await conn.read(1000);
    const sent = conn.transcript.entries().find((e) => e.dir === "send")!;
    expect(sent.text).toBe(`{"token":"${REDACTED}"}\n`);
    expect(JSON.stringify(conn.transcript.entries())).not.toContain("s3cret");
    expect(conn.transcript.entries().find((e) => e.dir === "recv")!.base64).toBe(
      Buffer.from([0xff, 0xfe]).toString("base64"),
    );
    conn.close();
  });

  it("records a split write's cuts and pause, and a long send's filler as a run that rebuilds it", async () => {
    const port = await serve(() => {});
    const conn = await open(port, { transcriptBytes: 16 });
    await conn.write('{"id":1}\n', { splitAt: [3, 6], delayMs: 2 });
    const long = `${"x".repeat(100)}\n`;
    await conn.write(long);
    const [split, filler] = conn.transcript.entries().filter((e) => e.dir === "send");
    expect(split).toMatchObject({ text: '{"id":1}\n', length: 9, cuts: [3, 6], pauseMs: 2 });
    expect(filler).toMatchObject({ text: "x".repeat(16), length: 101, truncated: true });
    const rest = filler!.rest!;
    const rebuilt = filler!.text! + Buffer.from(rest.run, "base64").toString().repeat(rest.times);
    expect(rebuilt + Buffer.from(rest.tail, "base64").toString()).toBe(long);
    conn.close();
  });

  it.runIf(process.platform === "linux")(
    "takes a pause again when this process overslept it, so a peer that was not running either still reads the segments apart",
    async () => {
      // The peer, another process, prints the size of each read; it is stopped while this process is busy past the
      // pause, as a loaded machine stops both.
      const peer = spawn(
        process.execPath,
        [
          "-e",
          `const s = require("net").createServer((c) => c.on("data", (d) => console.log(d.length)));
         s.listen(0, "127.0.0.1", () => console.log("port " + s.address().port));`,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      closers.push(async () => void peer.kill("SIGKILL"));
      let out = "";
      peer.stdout.on("data", (d: Buffer) => {
        out += d.toString();
      });
      const said = () => `the peer said only: ${JSON.stringify(out)}`;
      await until(() => /port \d+\n/.test(out), said);
      const conn = await open(Number(/port (\d+)/.exec(out)![1]));
      const pauseMs = 200;
      peer.kill("SIGSTOP");
      await until(() => /\) T /.test(readFileSync(`/proc/${peer.pid}/stat`, "utf8")), said);
      const sent = conn.write("first|second", { splitAt: [6], delayMs: pauseMs });
      // The first segment waits in the stopped peer's socket; the pause's timer is set once this turn ends.
      setTimeout(() => {
        const busyUntil = performance.now() + 2 * pauseMs;
        while (performance.now() < busyUntil); // this process overruns the pause
        setTimeout(() => peer.kill("SIGCONT"), pauseMs / 4); // and the peer runs again a little later
      }, 1);
      await sent;
      const reads = () => out.split("\n").slice(1, -1).map(Number);
      await until(() => reads().reduce((a, b) => a + b, 0) >= 12, said);
      expect(reads()).toEqual([6, 6]);
      conn.close();
    },
  );

  it("refuses with ConnectError when nothing listens", async () => {
    await expect(Connection.open("127.0.0.1", 1, opts)).rejects.toBeInstanceOf(ConnectError);
  });
});

describe("WireStats", () => {
  it("counts the bytes of text as UTF-8 on the wire, and its lines", () => {
    const stats = new WireStats();
    stats.sent("é\n€\n");
    stats.sent(Buffer.from("\ud800\n", "utf8")); // a lone surrogate goes out as U+FFFD, three bytes
    stats.sent("\ud800\n");
    expect(stats).toMatchObject({ bytesSent: 7 + 4 + 4, lines: 4 });
  });
});

describe("Harness: a reply naming a member twice", () => {
  /** Answers ping with {ok:true}; the replies to the ids in `twice` write "jsonrpc" twice. */
  async function harness(twice: Set<unknown>) {
    const s = await lineServer((line) => {
      const { id } = JSON.parse(line) as { id: unknown };
      const jsonrpc = `"jsonrpc":"${contract.jsonrpc}"`;
      return `{${twice.has(id) ? `${jsonrpc},` : ""}${jsonrpc},"id":${JSON.stringify(id)},"result":{"ok":true}}\n`;
    });
    closers.push(s.close);
    const endpoint = { host: "127.0.0.1", port: s.port };
    const options = { contract, endpoint, timeoutMs: 1000, runs: 1, timeBudgetMs: 1000, seed: 1 };
    return new Harness({ ...options, deadline: Date.now() + 10_000 });
  }
  const ping = (id: unknown) => ({ jsonrpc: contract.jsonrpc, id, method: "ping", params: {} });
  const pings = (h: Harness, ids: unknown[]) =>
    h.runCase(async () => {
      const conn = await h.session();
      for (const id of ids) await h.call(conn, ping(id));
      return { verdict: "pass", message: "all answered" };
    });

  it("warns on wire.ndjson, showing that reply, when it is the case's last", async () => {
    const h = await harness(new Set([3]));
    const finding = await pings(h, [1, 2, 3]);
    expect(finding).toMatchObject({ verdict: "warn", rules: ["wire.ndjson"] });
    expect(finding.message).toContain('"jsonrpc" twice');
    expect(finding.actual).toContain('"id":3');
  });

  it("warns on the first such reply of a case when requests follow it, and not in the next case", async () => {
    const h = await harness(new Set([2, 4]));
    const finding = await pings(h, [1, 2, 3, 4, 5]);
    expect(finding).toMatchObject({ verdict: "warn", rules: ["wire.ndjson"] });
    expect(finding.actual).toContain('"id":2');
    expect((await pings(h, [6, 7])).verdict).toBe("pass");
  });

  it("warns when it is one of many replies read before the next request", async () => {
    const h = await harness(new Set([150]));
    const ids = Array.from({ length: 200 }, (_, i) => i);
    const finding = await h.runCase(async () => {
      const conn = await h.session();
      await conn.write(ids.map((id) => `${JSON.stringify(ping(id))}\n`).join(""));
      for (const id of ids) await h.read(conn, { expectId: id });
      return { verdict: "pass", message: "all answered" };
    });
    expect(finding).toMatchObject({ verdict: "warn", rules: ["wire.ndjson"] });
    expect(finding.actual).toContain('"id":150');
  });

  it("leaves a failing case failed", async () => {
    const h = await harness(new Set([1]));
    const finding = await h.runCase(async () => {
      await h.call(await h.session(), ping(1));
      return { verdict: "fail", message: "failed for another reason" };
    });
    expect(finding).toMatchObject({ verdict: "fail", message: "failed for another reason" });
  });
});

describe("Harness.call: each reply judged as it arrives", () => {
  /** Answers each request line with the lines `answer` gives for its id. */
  async function harness(answer: (id: unknown) => string) {
    const s = await lineServer((line) => answer((JSON.parse(line) as { id: unknown }).id));
    closers.push(s.close);
    const endpoint = { host: "127.0.0.1", port: s.port };
    const options = { contract, endpoint, timeoutMs: 1000, runs: 1, timeBudgetMs: 1000, seed: 1 };
    return new Harness({ ...options, deadline: Date.now() + 10_000 });
  }
  const ping = (id: unknown) => ({ jsonrpc: contract.jsonrpc, id, method: "ping", params: {} });
  const pong = (id: unknown) => `{"jsonrpc":"${contract.jsonrpc}","id":${JSON.stringify(id)},"result":{"ok":true}}`;

  it("fails the case on the rule a reply breaks, whether it came after the request or was already read", async () => {
    // Id 1 is answered twice, the second time with a line that is not JSON: that line is read before request 2.
    const h = await harness((id) =>
      id === 1 ? `${pong(1)}\n{"jsonrpc"\n` : id === 3 ? "not json\n" : `${pong(id)}\n`,
    );
    const calls = (ids: unknown[]) =>
      h.runCase(async () => {
        const conn = await h.session();
        for (const id of ids) await h.call(conn, ping(id));
        return { verdict: "pass", message: "all answered" };
      });
    expect(await calls([1, 2])).toMatchObject({ verdict: "fail", rules: ["wire.ndjson"] });
    expect(await calls([2, 3])).toMatchObject({ verdict: "fail", rules: ["wire.ndjson"], actual: "not json" });
    expect(await calls([2, 4])).toMatchObject({ verdict: "pass" });
  });

  it("gives a check the reply's bytes as they came", async () => {
    const h = await harness((id) => `${pong(id).replace("true", 'true,"name":"\u00e9\u{1f600}"')}\n`);
    let raw: string | undefined;
    const finding = await h.runCase(async () => {
      const reply = await h.call(await h.session(), ping(7));
      raw = reply.kind === "response" ? reply.raw.toString("utf8") : reply.kind;
      return { verdict: "pass", message: "" };
    });
    expect(finding.verdict).toBe("pass");
    expect(raw).toBe(`{"jsonrpc":"${contract.jsonrpc}","id":7,"result":{"ok":true,"name":"\u00e9\u{1f600}"}}`);
  });
});

describe("Harness near its deadline", () => {
  /** A harness on a bridge that answers ping (ids in `silent` never), with `ms` left before its deadline. */
  async function harness(ms: number, silent = new Set<unknown>(), exact: { path?: string } = {}) {
    const s = await lineServer((line) => {
      const { id } = JSON.parse(line) as { id: unknown };
      return silent.has(id)
        ? undefined
        : `{"jsonrpc":"${contract.jsonrpc}","id":${JSON.stringify(id)},"result":{"ok":true}}\n`;
    });
    closers.push(s.close);
    const endpoint = { host: "127.0.0.1", port: s.port };
    const options = { contract, endpoint, timeoutMs: 1000, runs: 5, timeBudgetMs: 1000, seed: 1 };
    return new Harness({ ...options, ...exact, deadline: Date.now() + ms });
  }
  const ping = (id: unknown) => ({ jsonrpc: contract.jsonrpc, id, method: "ping", params: {} });

  it("lets the case under way finish before another starts, so no case closes another's connections", async () => {
    // Cases of 150 ms against a deadline 400 ms away: the third is under way when no more may start.
    const h = await harness(400);
    let running = 0;
    let most = 0;
    const slowCase = async () => {
      most = Math.max(most, ++running);
      try {
        const conn = await h.session();
        await h.call(conn, ping(1));
        await new Promise((resolve) => setTimeout(resolve, 150));
        const reply = await h.call(conn, ping(2));
        return reply.kind === "response" ? pass("answered") : fail("no reply", "a reply", describeReply(reply));
      } finally {
        running--;
      }
    };
    const first = await h.property(fc.integer(), slowCase);
    const second = await h.property(fc.integer(), slowCase);
    expect(most).toBe(1);
    expect([first.verdict, second.verdict]).not.toContain("fail");
  });

  it("reads a wait for a reply that its deadline cut short as no verdict, not as a bridge that stopped answering", async () => {
    const h = await harness(200, new Set([2]));
    const finding = await h.runCase(async () => {
      const conn = await h.session();
      const reply = await h.call(conn, ping(2));
      return reply.kind === "response" ? pass("answered") : fail("no reply", "a reply", describeReply(reply));
    });
    expect(finding).toMatchObject({ verdict: "error", message: "the check ran out of time" });
  });

  it("counts no case the deadline cut short as passed, and calls an exact replay cut short no replay", async () => {
    const unanswered = (h: Harness) => async () => {
      const reply = await h.call(await h.session(), ping(2));
      return reply.kind === "response" ? pass("answered") : fail("no reply", "a reply", describeReply(reply));
    };
    const generated = await harness(200, new Set([2]));
    expect(await generated.property(fc.integer(), unanswered(generated))).toMatchObject({
      verdict: "error",
      message: expect.stringMatching(/^no generated case finished within the check's deadline/),
    });
    const replayed = await harness(200, new Set([2]), { path: "0" });
    expect(await replayed.property(fc.integer(), unanswered(replayed))).toMatchObject({
      verdict: "error",
      message: "the check ran out of time",
    });
  });
});
