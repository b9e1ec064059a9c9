import type { Socket } from "node:net";
import { type JsonObject, ReferenceBridge, type Session } from "../reference/bridge.js";
import { type Mutant, mutant } from "./mutant.js";

// Mutants for limits in bytes, RFC 8259 JSON, strict replies and the byte stream.

const BYTES_NOT_CHARACTERS = "wire.line-limit/bytes-not-characters";
const VALID_EDGES = "error.parse/valid-edges";

/** A bridge that measures a line with `measure` instead of counting its bytes; it reads on to the LF while under. */
class MeasuredLimit extends ReferenceBridge {
  protected measure(line: Buffer): number {
    return line.length;
  }

  protected override handleFrame(session: Session, line: Buffer, terminated: boolean): boolean {
    if (this.measure(line) > this.options.maxLineBytes) return this.rejectOversized(session, line, terminated);
    if (!terminated) return true; // under the limit by its own measure: wait for the LF
    const response = this.handleLine(session, line);
    if (response) this.send(session, response);
    return true;
  }
}

/** A game loop's frame, for a bridge that answers requests on its loop rather than as they arrive. */
const FRAME_MS = 50;

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a;

/**
 * The reference's framing spelled out with hooks, so one step of it can be bent: which complete lines of a read
 * are processed, how each is processed, when an unterminated line is too long, what the peer's FIN does.
 */
class Framed extends ReferenceBridge {
  protected linesOf(lines: Buffer[]): Buffer[] {
    return lines;
  }

  protected process(session: Session, line: Buffer): boolean {
    return this.handleFrame(session, line, true);
  }

  protected tooLong(pendingBytes: number): boolean {
    return pendingBytes > this.options.maxLineBytes;
  }

  /** The peer half-closed; `rest` is what came after its last LF. */
  protected atEnd(_session: Session, _rest: Buffer): void {}

  protected override serve(socket: Socket): void {
    socket.setNoDelay(true);
    const session: Session = { authorized: this.options.token === "", socket };
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    socket.on("data", (chunk: Buffer) => {
      const lines: Buffer[] = [];
      let at = chunk.indexOf(0x0a);
      while (at !== -1) {
        lines.push(Buffer.concat([...pending, chunk.subarray(0, at)]));
        pending = [];
        pendingBytes = 0;
        chunk = chunk.subarray(at + 1);
        at = chunk.indexOf(0x0a);
      }
      for (const line of this.linesOf(lines)) if (!this.process(session, line)) return;
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (this.tooLong(pendingBytes)) this.rejectOversized(session, Buffer.concat(pending), false);
    });
    socket.on("end", () => this.atEnd(session, Buffer.concat(pending)));
    socket.resume();
  }
}

/** Whether any string in a parsed value holds a character that `test` picks. */
function anyString(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === "string") return test(value);
  if (typeof value === "object" && value !== null)
    return Object.entries(value).some(([k, v]) => test(k) || anyString(v, test));
  return false;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** How deep brackets nest in a line (strings skipped). */
function nestingDepth(line: Buffer): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < line.length; i++) {
    const b = line[i];
    if (inString) {
      if (b === 0x5c) i++;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) max = Math.max(max, ++depth);
    else if (b === 0x5d || b === 0x7d) depth--;
  }
  return max;
}

/** Mutants for limits in bytes, RFC 8259 JSON, strict replies and the byte stream. */
export const mutants: Mutant[] = [
  mutant(
    "limit-in-utf16-units",
    BYTES_NOT_CHARACTERS,
    "wire.line-limit",
    "counts the line limit in UTF-16 code units (a JavaScript string's length), not bytes",
    class extends MeasuredLimit {
      protected override measure(line: Buffer): number {
        return line.toString("utf8").length;
      }
    },
  ),
  mutant(
    "limit-in-modified-utf8",
    BYTES_NOT_CHARACTERS,
    "wire.line-limit",
    "counts a 4-byte character as 6 bytes (a surrogate pair in Java's modified UTF-8), so rejects a legal line",
    class extends MeasuredLimit {
      protected override measure(line: Buffer): number {
        let astral = 0;
        for (const b of line) if (b >= 0xf0) astral++;
        return line.length + 2 * astral;
      }
    },
  ),
  mutant(
    "limit-after-trim",
    BYTES_NOT_CHARACTERS,
    "wire.line-limit",
    "strips trailing whitespace before measuring the line",
    class extends MeasuredLimit {
      protected override measure(line: Buffer): number {
        let end = line.length;
        while (end > 0 && isSpace(line[end - 1])) end--;
        return end;
      }
    },
  ),
  mutant(
    "limit-without-cr",
    BYTES_NOT_CHARACTERS,
    "wire.line-limit",
    "takes CR LF as the terminator, so a CR before the LF is not counted",
    class extends MeasuredLimit {
      protected override measure(line: Buffer): number {
        return line.at(-1) === 0x0d ? line.length - 1 : line.length;
      }
    },
  ),
  mutant(
    "limit-on-full-buffer",
    "wire.line-limit/late-lf",
    "wire.line-limit",
    "rejects a line once its buffer of 1 MiB is full, before seeing whether the LF comes next",
    class extends Framed {
      protected override tooLong(pendingBytes: number): boolean {
        return pendingBytes >= this.options.maxLineBytes;
      }
    },
  ),
  mutant(
    "dies-on-deep-nesting",
    "error.parse/deep-nesting",
    "error.parse",
    "its recursive parser overflows the stack on deep nesting, taking the listener down",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        if (nestingDepth(line) > 1000) {
          void this.close();
          throw new RangeError("Maximum call stack size exceeded");
        }
        return super.parse(line);
      }
    },
  ),
  mutant(
    "closes-on-deep-nesting",
    "error.parse/deep-nesting",
    "error.parse",
    "closes the connection without a reply on a line nested over 1000 levels deep, and keeps serving",
    class extends ReferenceBridge {
      protected override handleFrame(session: Session, line: Buffer, terminated: boolean): boolean {
        if (nestingDepth(line) <= 1000) return super.handleFrame(session, line, terminated);
        this.hangUp(session.socket);
        return false;
      }
    },
    "warn",
  ),
  mutant(
    "ignores-bom",
    "error.parse/non-json",
    "error.parse",
    "skips a byte order mark before a request (RFC 8259 allows it; the strict reading does not)",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        const bom = line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf;
        return super.parse(bom ? line.subarray(3) : line);
      }
    },
    "warn",
  ),
  mutant(
    "raw-controls-accepted",
    "error.parse/non-json",
    "error.parse",
    "reads raw control characters inside strings as themselves (as Python's json.loads(strict=False) does)",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        try {
          return super.parse(line);
        } catch (err) {
          const escaped = line
            .toString("utf8")
            .replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
          if (escaped === line.toString("utf8")) throw err;
          return JSON.parse(escaped);
        }
      }
    },
  ),
  mutant(
    "method-ends-at-nul",
    VALID_EDGES,
    "error.method-not-found",
    "reads the method as a C string, so ping\\u0000 runs ping",
    class extends ReferenceBridge {
      protected override validateEnvelope(value: unknown) {
        const request = super.validateEnvelope(value);
        if (!(request instanceof Error)) request.method = request.method.split("\0")[0] || request.method;
        return request;
      }
    },
  ),
  mutant(
    "escaped-controls-rejected",
    VALID_EDGES,
    "error.parse",
    "answers escaped control characters in strings (\\u0000, \\n) with a parse error",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        const value = super.parse(line);
        if (anyString(value, (s) => /[\u0000-\u001f]/.test(s))) throw new SyntaxError("control character");
        return value;
      }
    },
  ),
  mutant(
    "dies-on-lone-surrogate",
    VALID_EDGES,
    "error.parse",
    "its encoder throws on an unpaired surrogate, taking the listener down without a reply",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        const value = super.parse(line);
        if (anyString(value, (s) => LONE_SURROGATE.test(s))) {
          void this.close();
          throw new TypeError("lone surrogate");
        }
        return value;
      }
    },
  ),
  mutant(
    "silent-on-duplicate-keys",
    VALID_EDGES,
    "error.parse",
    "drops a request that names a member twice, without a reply",
    class extends ReferenceBridge {
      protected override handleLine(session: Session, line: Buffer): JsonObject | undefined {
        const text = line.toString("utf8");
        if (["id", "method"].some((k) => text.split(`"${k}":`).length > 2)) return undefined;
        return super.handleLine(session, line);
      }
    },
  ),
  mutant(
    "bom-replies",
    "wire.ndjson/sequence-in-order",
    "wire.ndjson",
    "starts every response line with a byte order mark (EF BB BF)",
    class extends ReferenceBridge {
      protected override send(session: Session, response: JsonObject): void {
        if (session.socket.writable) session.socket.write(`\ufeff${JSON.stringify(response)}\n`);
      }
    },
  ),
  mutant(
    "first-line-per-read",
    "wire.ndjson/pipelined",
    "wire.ndjson",
    "answers only the first line of each read from the socket, dropping the others",
    class extends Framed {
      protected override linesOf(lines: Buffer[]): Buffer[] {
        return lines.slice(0, 1);
      }
    },
  ),
  mutant(
    "closes-at-fin",
    "wire.tcp-stream/half-close",
    "wire.tcp-stream",
    "answers on its loop's next frame, but closes as soon as the client's FIN arrives",
    class extends Framed {
      protected override process(session: Session, line: Buffer): boolean {
        setTimeout(() => this.handleFrame(session, line, true), FRAME_MS);
        return true;
      }
      protected override atEnd(session: Session): void {
        session.socket.destroy();
      }
    },
  ),
  mutant(
    "runs-unterminated-at-fin",
    "wire.ndjson/unterminated-at-eof",
    "wire.ndjson",
    "runs the bytes after the last LF as a request when the client's FIN arrives",
    class extends Framed {
      protected override serve(socket: Socket): void {
        socket.allowHalfOpen = true; // keep writing after the client's FIN, to answer what it left behind
        super.serve(socket);
      }
      protected override atEnd(session: Session, rest: Buffer): void {
        if (rest.length > 0) this.handleFrame(session, rest, true);
        session.socket.end();
      }
    },
  ),
];
