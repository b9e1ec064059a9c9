import { contract } from "../../protocol/contract.js";
import {
  type BridgeOptions,
  CODES,
  type Json,
  type JsonObject,
  ReferenceBridge,
  type Session,
} from "../reference/bridge.js";
import { alsoBreaking, type Mutant, mutant } from "./mutant.js";

// Mutants for the wire: framing lines out of TCP reads, encoding, the line limit, envelopes and parsing.

const lenientDecoder = new TextDecoder("utf-8");

/** Framing, encoding, line limit, envelope and parse faults. */
export const framing: Mutant[] = [
  mutant(
    "segment-per-request",
    "wire.tcp-stream/split-writes",
    "wire.tcp-stream",
    "treats every TCP segment as a whole request",
    class extends ReferenceBridge {
      protected override serve(socket: import("node:net").Socket): void {
        const session: Session = { authorized: this.options.token === "", socket };
        socket.on("data", (chunk: Buffer) => {
          for (const line of chunk.toString("latin1").split("\n").filter(Boolean))
            this.handleFrame(session, Buffer.from(line, "latin1"), true);
        });
        socket.resume();
      }
    },
  ),
  mutant(
    "pretty-printed",
    "wire.ndjson/sequence-in-order",
    "wire.ndjson",
    "writes responses as indented multi-line JSON",
    class extends ReferenceBridge {
      protected override send(session: Session, response: JsonObject): void {
        if (session.socket.writable) session.socket.write(`${JSON.stringify(response, null, 2)}\n`);
      }
    },
  ),
  mutant(
    "latin1-responses",
    "wire.utf8/unicode-text",
    "wire.utf8",
    "encodes responses as Latin-1",
    class extends ReferenceBridge {
      protected override send(session: Session, response: JsonObject): void {
        if (session.socket.writable) session.socket.write(Buffer.from(`${JSON.stringify(response)}\n`, "latin1"));
      }
    },
  ),
  alsoBreaking(
    mutant(
      "lenient-utf8",
      "wire.utf8/malformed",
      "wire.utf8",
      "decodes malformed UTF-8 with replacement characters instead of rejecting it",
      class extends ReferenceBridge {
        protected override parse(line: Buffer): unknown {
          return JSON.parse(lenientDecoder.decode(line));
        }
      },
    ),
    "error.parse",
  ),
  alsoBreaking(
    mutant(
      "dies-on-malformed-utf8",
      "wire.utf8/malformed",
      "wire.utf8",
      "stops listening after malformed UTF-8",
      class extends ReferenceBridge {
        protected override parse(line: Buffer): unknown {
          try {
            return super.parse(line);
          } catch (err) {
            if (lenientDecoder.decode(line).includes("\ufffd")) void this.close();
            throw err;
          }
        }
      },
    ),
    "error.parse",
  ),
  alsoBreaking(
    mutant(
      "no-line-limit",
      "wire.line-limit/over-limit",
      "wire.line-limit",
      "accepts lines of any length",
      class extends ReferenceBridge {
        constructor(options: BridgeOptions = {}) {
          super({ ...options, maxLineBytes: Number.MAX_SAFE_INTEGER });
        }
      },
    ),
    "error.invalid-request",
  ),
  mutant(
    "limit-off-by-one",
    "wire.line-limit/exact-limit",
    "wire.line-limit",
    "rejects a payload of exactly 1 MiB",
    class extends ReferenceBridge {
      constructor(options: BridgeOptions = {}) {
        super({ ...options, maxLineBytes: contract.limits.maxLineBytes - 1 });
      }
    },
  ),
  mutant(
    "runs-oversized-tail",
    "wire.line-limit/over-limit",
    "wire.line-limit",
    "rejects the first 1 MiB of an oversized line, then runs the rest as a request",
    class extends ReferenceBridge {
      protected override rejectOversized(session: Session, line: Buffer, terminated: boolean): boolean {
        if (!terminated) return true; // keep buffering until the LF
        this.send(session, this.errorResponse(null, CODES.invalidRequest, "Request too large"));
        return this.handleFrame(session, line.subarray(this.options.maxLineBytes), true);
      }
    },
  ),
  alsoBreaking(
    mutant(
      "lenient-envelope",
      "wire.request-envelope/bad-envelope",
      "wire.request-envelope",
      "ignores jsonrpc and takes params of any type",
      class extends ReferenceBridge {
        protected override validateEnvelope(value: unknown) {
          if (typeof value === "object" && value !== null && !Array.isArray(value)) {
            const v = value as Record<string, unknown>;
            return super.validateEnvelope({
              ...v,
              jsonrpc: contract.jsonrpc,
              params: typeof v.params === "object" && v.params !== null && !Array.isArray(v.params) ? v.params : {},
            });
          }
          return super.validateEnvelope(value);
        }
      },
    ),
    "error.invalid-request",
  ),
  mutant(
    "id-as-string",
    "wire.response-envelope/echo-id",
    "wire.response-envelope",
    "echoes the request id as a string",
    class extends ReferenceBridge {
      protected override resultResponse(id: Json, result: Json): JsonObject {
        return super.resultResponse(typeof id === "string" ? id : JSON.stringify(id), result);
      }
    },
  ),
  alsoBreaking(
    mutant(
      "lenient-json",
      "error.parse/non-json",
      "error.parse",
      "parses NaN, comments and trailing commas",
      class extends ReferenceBridge {
        protected override parse(line: Buffer): unknown {
          try {
            return super.parse(line);
          } catch {
            const text = line
              .toString("utf8")
              .replace(/\/\*.*?\*\//g, "")
              .replace(/,\s*([}\]])/g, "$1")
              .replace(/-?\b(NaN|Infinity)\b/g, "null");
            return JSON.parse(text);
          }
        }
      },
    ),
    "wire.utf8",
  ),
  mutant(
    "accepts-nan-only",
    "error.parse/non-json",
    "error.parse",
    "takes NaN where a value stands (as null) but refuses -NaN, Infinity and -Infinity: one value of the four a " +
      "lenient parser may take",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        try {
          return super.parse(line);
        } catch (err) {
          const text = line.toString("utf8");
          if (!/[:[,]NaN[,}\]]/.test(text)) throw err;
          return JSON.parse(text.replace(/([:[,])NaN(?=[,}\]])/g, "$1null"));
        }
      }
    },
  ),
  alsoBreaking(
    mutant(
      "parse-error-as-invalid-request",
      "error.parse/non-json",
      "error.parse",
      "answers malformed JSON with -32600",
      class extends ReferenceBridge {
        protected override handleLine(session: Session, line: Buffer): JsonObject | undefined {
          const response = super.handleLine(session, line);
          const error = response?.error as { code?: number } | undefined;
          if (error?.code === CODES.parse) error.code = CODES.invalidRequest;
          return response;
        }
      },
    ),
    "wire.utf8",
    "wire.ndjson",
  ),
];

/** Faults in how a stream of lines and a run of connections are served. */
export const streams: Mutant[] = [
  mutant(
    "reorders-pipelined",
    "wire.ndjson/pipelined",
    "wire.ndjson",
    "answers the lines of one TCP read last first",
    class extends ReferenceBridge {
      protected override serve(socket: import("node:net").Socket): void {
        const session: Session = { authorized: this.options.token === "", socket };
        socket.on("data", (chunk: Buffer) => {
          const lines = chunk.toString("latin1").split("\n").slice(0, -1).reverse();
          for (const line of lines) this.handleFrame(session, Buffer.from(line, "latin1"), true);
        });
        socket.resume();
      }
    },
  ),
  alsoBreaking(
    mutant(
      "blank-line-invalid-request",
      "wire.ndjson/blank-line",
      "wire.ndjson",
      "answers an empty line with -32600",
      class extends ReferenceBridge {
        protected override handleLine(session: Session, line: Buffer): JsonObject | undefined {
          return line.length === 0
            ? this.errorResponse(null, CODES.invalidRequest, "Invalid request")
            : super.handleLine(session, line);
        }
      },
    ),
    "error.parse",
  ),
  mutant(
    "buffers-unterminated-lines",
    "wire.line-limit/endless-line",
    "wire.line-limit",
    "enforces the limit only once the LF arrives, buffering until then",
    class extends ReferenceBridge {
      protected override rejectOversized(session: Session, line: Buffer, terminated: boolean): boolean {
        return terminated ? super.rejectOversized(session, line, terminated) : true;
      }
    },
  ),
  mutant(
    "stops-after-five-connections",
    "wire.sequential-connection/reconnect",
    "wire.sequential-connection",
    "leaks its handler, so after five connections it answers no more",
    class extends ReferenceBridge {
      private served = 0;
      protected override serve(socket: import("node:net").Socket): void {
        if (++this.served > 5) return void socket.pause();
        super.serve(socket);
      }
    },
  ),
];
