// Deliberately broken clients: each bends the reference client in one place and must make client
// mode fail (or warn) on the rule it names, proving each client check can fail.
// Run one with `node dist/bridges/clients/reference.js --mutant NAME ...`.
import { type CallArgs, ReferenceClient } from "./client.js";

export interface ClientMutant {
  name: string;
  /** The check that must catch it. */
  check: string;
  /** The rule it breaks (short ID). */
  breaks: string;
  verdict: "fail" | "warn";
  description: string;
  /** What to ask of it, where the check needs more than `ping`: options and the method. */
  asks?: string;
  create(): ReferenceClient;
}

const mutant = (
  name: string,
  check: string,
  breaks: string,
  description: string,
  Client: typeof ReferenceClient,
  verdict: "fail" | "warn" = "fail",
  asks?: string,
): ClientMutant => ({
  name,
  check,
  breaks,
  verdict,
  description,
  ...(asks ? { asks } : {}),
  create: () => new Client(),
});

const lenientUtf8 = new TextDecoder("utf-8");
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
/** The contract's queue-full code, as the mutant that retries on it knows it. */
const QUEUE_FULL = -32002;

export const clientMutants: ClientMutant[] = [
  mutant(
    "accepts-nan",
    "validation.malformed-peer/non-json",
    "validation.malformed-peer",
    "reads NaN and Infinity as numbers (a lenient JSON parser)",
    class extends ReferenceClient {
      protected override parse(text: string): unknown {
        return JSON.parse(text.replace(/-?\b(NaN|Infinity)\b/g, "null"));
      }
    },
  ),
  mutant(
    "unwraps-batch",
    "validation.malformed-peer/non-object",
    "validation.malformed-peer",
    "reads a JSON array as a batch and takes its first element as the response to its single request",
    class extends ReferenceClient {
      protected override judge(reply: unknown, id: unknown) {
        return super.judge(Array.isArray(reply) ? reply[0] : reply, id);
      }
    },
  ),
  mutant(
    "ignores-jsonrpc",
    "validation.malformed-peer/jsonrpc",
    "validation.malformed-peer",
    "never looks at the jsonrpc member: a reply without it, or of another version, passes",
    class extends ReferenceClient {
      protected override judge(reply: unknown, id: unknown) {
        const isObject = typeof reply === "object" && reply !== null && !Array.isArray(reply);
        return super.judge(isObject ? { ...reply, jsonrpc: this.facts.jsonrpc } : reply, id);
      }
    },
  ),
  mutant(
    "loose-id",
    "validation.malformed-peer/id",
    "validation.malformed-peer",
    'compares ids loosely: "1" and true match 1',
    class extends ReferenceClient {
      protected override sameId(got: unknown, sent: unknown): boolean {
        // biome-ignore lint/suspicious/noDoubleEquals: the deliberate defect
        return got == sent || String(got) === String(sent);
      }
    },
  ),
  mutant(
    "dual-result-error",
    "validation.malformed-peer/result-and-error",
    "validation.malformed-peer",
    "takes the result of a reply that carries both result and error",
    class extends ReferenceClient {
      protected override judge(reply: unknown, id: unknown) {
        if (typeof reply === "object" && reply !== null && "result" in reply && "error" in reply) {
          const { error: _, ...rest } = reply as Record<string, unknown>;
          return super.judge(rest, id);
        }
        return super.judge(reply, id);
      }
    },
  ),
  mutant(
    "non-integer-code",
    "validation.malformed-peer/error-shape",
    "validation.malformed-peer",
    "takes any number or boolean as an error code",
    class extends ReferenceClient {
      protected override isCode(code: unknown): boolean {
        return typeof code === "number" || typeof code === "boolean";
      }
    },
  ),
  mutant(
    "closed-is-success",
    "validation.malformed-peer/no-reply",
    "validation.malformed-peer",
    "reports success when the connection ends without a reply",
    class extends ReferenceClient {
      protected override atEnd(partial: Buffer) {
        return partial.length ? super.atEnd(partial) : { kind: "result" as const, result: null };
      }
    },
  ),
  mutant(
    "error-as-result",
    "wire.response-envelope/valid-errors",
    "wire.response-envelope",
    "reports a valid error reply as a result",
    class extends ReferenceClient {
      protected override judge(reply: unknown, id: unknown) {
        const outcome = super.judge(reply, id);
        return outcome.kind === "remote-error" ? { kind: "result" as const, result: outcome.error } : outcome;
      }
    },
  ),
  mutant(
    "text-envelope",
    "wire.response-envelope/valid-results",
    "wire.response-envelope",
    "checks the envelope by matching the reply's raw text, so valid JSON written otherwise is refused",
    class extends ReferenceClient {
      protected override parse(text: string): unknown {
        if (!text.includes(`"jsonrpc":"${this.facts.jsonrpc}"`)) throw new Error("no jsonrpc member");
        return JSON.parse(text);
      }
    },
  ),
  mutant(
    "unbounded-line",
    "wire.line-limit/oversized-reply",
    "wire.line-limit",
    "takes reply lines of any length",
    class extends ReferenceClient {
      protected override tooLong(): boolean {
        return false;
      }
    },
  ),
  mutant(
    "counts-characters",
    "wire.line-limit/oversized-reply",
    "wire.line-limit",
    "measures the line limit in characters, not bytes",
    class extends ReferenceClient {
      protected override tooLong(bytes: Buffer): boolean {
        return lenientUtf8.decode(bytes).length > this.facts.maxLineBytes;
      }
    },
  ),
  mutant(
    "limit-off-by-one",
    "wire.line-limit/exact-limit-reply",
    "wire.line-limit",
    "rejects a reply of exactly the limit",
    class extends ReferenceClient {
      protected override tooLong(bytes: Buffer): boolean {
        return bytes.length >= this.facts.maxLineBytes;
      }
    },
  ),
  mutant(
    "lenient-utf8",
    "wire.utf8/malformed-reply",
    "wire.utf8",
    "decodes replies with replacement characters instead of rejecting malformed UTF-8",
    class extends ReferenceClient {
      protected override decode(line: Buffer): string {
        return lenientUtf8.decode(line);
      }
    },
  ),
  mutant(
    "strips-bom",
    "wire.ndjson/bom-reply",
    "wire.ndjson",
    "skips a byte order mark at the start of a reply",
    class extends ReferenceClient {
      protected override decode(line: Buffer): string {
        return super.decode(line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? line.subarray(3) : line);
      }
    },
    "warn",
  ),
  mutant(
    "rejects-cr-before-lf",
    "wire.ndjson/crlf-reply",
    "wire.ndjson",
    "takes a CR before the LF for a broken line and rejects the reply",
    class extends ReferenceClient {
      protected override decode(line: Buffer): string {
        if (line.at(-1) === 0x0d) throw new Error("the reply line ends with a CR");
        return super.decode(line);
      }
    },
  ),
  mutant(
    "reads-to-eof",
    "wire.ndjson/unterminated-reply",
    "wire.ndjson",
    "takes the bytes before the end of the connection as a reply, LF or not",
    class extends ReferenceClient {
      protected override atEnd(partial: Buffer) {
        return partial.length ? this.interpret(partial, 1) : super.atEnd(partial);
      }
    },
  ),
  mutant(
    "one-segment-reply",
    "wire.tcp-stream/segmented-reply",
    "wire.tcp-stream",
    "expects the whole reply in its first read and refuses one whose first TCP segment holds no LF " +
      "(so a line of the limit, which never fits one read, is refused too)",
    class extends ReferenceClient {
      protected override unfinished() {
        return { kind: "rejected" as const, reason: "the reply is incomplete: its first segment holds no LF" };
      }
    },
  ),
  mutant(
    "no-timeout",
    "validation.finite-timeout/silence",
    "validation.finite-timeout",
    "waits for a reply without any deadline",
    class extends ReferenceClient {
      protected override armDeadline() {
        return { onData() {}, clear() {} };
      }
    },
  ),
  mutant(
    "late-timeout",
    "validation.finite-timeout/silence",
    "validation.finite-timeout",
    "gives up only at twice the timeout it was given",
    class extends ReferenceClient {
      protected override armDeadline(ms: number, expire: () => void) {
        return super.armDeadline(2 * ms, expire);
      }
    },
    "warn",
  ),
  mutant(
    "per-read-timeout",
    "validation.finite-timeout/drip-feed",
    "validation.finite-timeout",
    "restarts its timeout on every read, so a peer sending a byte at a time holds it indefinitely",
    class extends ReferenceClient {
      protected override armDeadline(ms: number, expire: () => void) {
        let timer = setTimeout(expire, ms);
        return {
          onData() {
            clearTimeout(timer);
            timer = setTimeout(expire, ms);
          },
          clear: () => clearTimeout(timer),
        };
      }
    },
    "warn",
  ),
  mutant(
    "lax-timeout",
    "validation.finite-timeout/invalid-timeout",
    "validation.finite-timeout",
    "falls back to a default instead of refusing an invalid timeout",
    class extends ReferenceClient {
      protected override parseTimeout(text: string): number {
        const seconds = Number.parseFloat(text);
        return Number.isFinite(seconds) && seconds > 0 ? seconds : 1;
      }
    },
  ),
  mutant(
    "any-host",
    "security.loopback-default/any-address",
    "security.loopback-default",
    "connects to any host without an opt-in",
    class extends ReferenceClient {
      protected override checkHost(): void {}
    },
  ),
  mutant(
    "no-params",
    "wire.request-envelope/client-request",
    "wire.request-envelope",
    "leaves params out of its request",
    class extends ReferenceClient {
      protected override encodeRequest(id: number, method: string): Buffer {
        return Buffer.from(`${JSON.stringify({ jsonrpc: this.facts.jsonrpc, id, method })}\n`);
      }
    },
  ),
  mutant(
    "no-lf-request",
    "wire.request-envelope/client-request",
    "wire.ndjson",
    "sends its request without the LF",
    class extends ReferenceClient {
      protected override encodeRequest(id: number, method: string, params: Record<string, unknown>): Buffer {
        return super.encodeRequest(id, method, params).subarray(0, -1);
      }
    },
  ),
  mutant(
    "bom-request",
    "wire.request-envelope/client-request",
    "wire.ndjson",
    "starts its request line with a UTF-8 byte order mark",
    class extends ReferenceClient {
      protected override encodeRequest(id: number, method: string, params: Record<string, unknown>): Buffer {
        return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), super.encodeRequest(id, method, params)]);
      }
    },
  ),
  mutant(
    "latin1-request",
    "wire.request-envelope/client-request",
    "wire.utf8",
    "encodes its request as Latin-1, not UTF-8",
    class extends ReferenceClient {
      protected override encodeRequest(id: number, method: string, params: Record<string, unknown>): Buffer {
        return Buffer.from(
          `${JSON.stringify({ jsonrpc: this.facts.jsonrpc, id, method, params: { ...params, note: "caf\u00e9" } })}\n`,
          "latin1",
        );
      }
    },
  ),
  mutant(
    "huge-request",
    "wire.request-envelope/client-request",
    "wire.line-limit",
    "sends a request line over the limit",
    class extends ReferenceClient {
      protected override encodeRequest(id: number, method: string, params: Record<string, unknown>): Buffer {
        const pad = "x".repeat(this.facts.maxLineBytes);
        return super.encodeRequest(id, method, { ...params, pad });
      }
    },
  ),
  mutant(
    "pipelined",
    "wire.request-envelope/client-request",
    "wire.sequential-connection",
    "sends a second request before the first one's response",
    class extends ReferenceClient {
      protected override send(write: (bytes: Buffer) => void, request: Buffer): void {
        write(request);
        write(request);
      }
    },
  ),
  mutant(
    "http-framing",
    "wire.request-envelope/client-request",
    "wire.tcp-stream",
    "wraps its request in an HTTP POST",
    class extends ReferenceClient {
      protected override encodeRequest(id: number, method: string, params: Record<string, unknown>): Buffer {
        const body = super.encodeRequest(id, method, params);
        return Buffer.concat([
          Buffer.from(`POST / HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`),
          body,
        ]);
      }
    },
  ),
  mutant(
    "reconnects-forever",
    "validation.malformed-peer/closed-mid-reply",
    "validation.finite-timeout",
    "reconnects whenever a connection ends without a reply, without a bound, restarting its timeout on each",
    class extends ReferenceClient {
      protected override retries(): number {
        return Number.POSITIVE_INFINITY;
      }
      protected override armDeadline(ms: number, expire: () => void) {
        let timer = setTimeout(expire, ms);
        return {
          onData() {},
          onConnect() {
            clearTimeout(timer);
            timer = setTimeout(expire, ms);
          },
          clear: () => clearTimeout(timer),
        };
      }
    },
  ),
  mutant(
    "reuses-auth",
    "validation.security/reauth-after-reconnect",
    "validation.security",
    "reconnects after a connection ends without a reply, taking the new connection as already authorized",
    class extends ReferenceClient {
      protected override retries(args: CallArgs): number {
        return Math.max(1, super.retries(args));
      }
      protected override authorizes(connection: number): boolean {
        return connection === 0;
      }
    },
  ),
  mutant(
    "retries-queue-full",
    "wire.response-envelope/queue-full",
    "wire.response-envelope",
    "sends its request again on a full queue, until its time runs out, and so never reports the full queue",
    class extends ReferenceClient {
      protected override resend(error: { code: number }): boolean {
        return error.code === QUEUE_FULL;
      }
    },
  ),
  mutant(
    "decodes-per-read",
    "wire.tcp-stream/byte-per-segment-session",
    "wire.tcp-stream",
    "decodes every read as UTF-8 on its own, so a character split across two segments is refused",
    class extends ReferenceClient {
      protected override onRead(data: Buffer) {
        try {
          strictUtf8.decode(data);
          return undefined;
        } catch {
          return { kind: "rejected" as const, reason: "a read is not valid UTF-8" };
        }
      }
    },
  ),
  mutant(
    "last-line-of-read",
    "wire.ndjson/lines-in-one-write",
    "wire.ndjson",
    "takes the last complete line it holds as the reply, dropping the lines before it",
    class extends ReferenceClient {
      protected override nextLine(lines: Buffer[]): Buffer {
        return lines.splice(0).at(-1)!;
      }
    },
  ),
  mutant(
    "cursor-past-last",
    "method.events/follow-pages",
    "method.events",
    "asks for the next page after the last seq plus one, as if the cursor were inclusive, so one event a page is lost",
    class extends ReferenceClient {
      protected override nextCursor(page: { latestSeq: number; events: { seq: number }[] }) {
        const next = super.nextCursor(page);
        return next === undefined ? undefined : next + 1;
      }
    },
    "fail",
    `--follow events '{"limit":5}'`,
  ),
];
