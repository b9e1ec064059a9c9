import { type Json, type JsonObject, ReferenceBridge } from "../reference/bridge.js";
import { type Mutant, mutant } from "./mutant.js";

/** The reference with every completion it records bent by `change`. */
const withCompletion = (change: (event: JsonObject) => JsonObject) =>
  class extends ReferenceBridge {
    protected override recordEvent(event: JsonObject): void {
      super.recordEvent(event.type === "command_completed" ? change(event) : event);
    }
  };

/** Whether a parsed JSON value holds a number no double holds (read as Infinity). */
const hasNonFinite = (value: unknown): boolean =>
  typeof value === "number"
    ? !Number.isFinite(value)
    : typeof value === "object" && value !== null && Object.values(value).some(hasNonFinite);

/** Mutants whose replies carry the right values in the wrong JSON form: a number through a double, a type changed. */
export const mutants: Mutant[] = [
  mutant(
    "id-through-double",
    "wire.response-envelope/precise-id",
    "wire.response-envelope",
    "reads the id into a double and writes that back: 1e400 comes back as null (Infinity is no JSON value), " +
      "12345678901234567890 as its nearest double 12345678901234567000",
    class extends ReferenceBridge {
      protected override idText(): string | undefined {
        return undefined;
      }
    },
  ),
  mutant(
    "id-nearest-double",
    "wire.response-envelope/precise-id",
    "wire.response-envelope",
    "echoes a numeric id as its nearest double (3.141592653589793 for 3.141592653589793238462643383279, as " +
      "Python's json and JavaScript's JSON.parse read it), and refuses one no double holds (1e400) as a parse error",
    class extends ReferenceBridge {
      protected override idText(): string | undefined {
        return undefined;
      }
      protected override parse(line: Buffer): unknown {
        const parsed = super.parse(line) as { id?: unknown } | null;
        if (hasNonFinite(parsed?.id)) throw new Error("number out of range");
        return parsed;
      }
    },
    "warn",
  ),
  mutant(
    "refuses-out-of-range-ids",
    "wire.response-envelope/precise-id",
    "wire.response-envelope",
    "refuses a request whose id is a number beyond a double's range (1e400) as a parse error",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        const parsed = super.parse(line) as { id?: unknown } | null;
        if (typeof parsed?.id === "number" && !Number.isFinite(parsed.id)) throw new Error("number out of range");
        return parsed;
      }
    },
    "warn",
  ),
  mutant(
    "id-truncated",
    "wire.response-envelope/precise-id",
    "wire.response-envelope",
    "echoes a long numeric id cut short: 3.141592653589793238462643383279 as 3.141592, 12345678901234567890 as " +
      "123456789012345",
    class extends ReferenceBridge {
      protected override line(response: JsonObject, idText?: string): string {
        const text = super.line(response, idText);
        const cut = idText?.replace(/^(-?\d+\.\d{6})\d+$/, "$1").replace(/^(-?\d{15})\d+$/, "$1");
        return cut === undefined || cut === idText ? text : text.replace(`"id":${idText}`, `"id":${cut}`);
      }
    },
  ),
  mutant(
    "id-digits-as-string",
    "wire.response-envelope/precise-id",
    "wire.response-envelope",
    'echoes a numeric id of 16 characters or more as a string of its digits ("12345678901234567890")',
    class extends ReferenceBridge {
      protected override line(response: JsonObject, idText?: string): string {
        const text = super.line(response, idText);
        return idText !== undefined && /^-?\d[\d.eE+-]{15,}$/.test(idText)
          ? text.replace(`"id":${idText}`, `"id":${JSON.stringify(idText)}`)
          : text;
      }
    },
  ),
  mutant(
    "repeats-a-name",
    "wire.ndjson/sequence-in-order",
    "wire.ndjson",
    'writes "jsonrpc" twice in every response object (the same value both times)',
    class extends ReferenceBridge {
      protected override line(response: JsonObject, idText?: string): string {
        const text = super.line(response, idText);
        const member = `"jsonrpc":${JSON.stringify(response.jsonrpc)}`;
        return text.replace(member, `${member},${member}`);
      }
    },
    "warn",
  ),
  mutant(
    "command-seq-as-string",
    "method.act/accept-and-complete",
    "method.act",
    'answers act with commandSeq as a numeric string ("7")',
    class extends ReferenceBridge {
      protected override act(params: JsonObject): Json {
        const accepted = super.act(params) as JsonObject;
        return { ...accepted, commandSeq: String(accepted.commandSeq) };
      }
    },
  ),
  mutant(
    "latest-seq-as-string",
    "method.events/cursor-edges",
    "method.events",
    'answers events with latestSeq as a numeric string ("12")',
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null, idText?: string): Json {
        const page = super.events(params, id, idText) as JsonObject;
        return { ...page, latestSeq: String(page.latestSeq) };
      }
    },
  ),
  mutant(
    "success-as-string",
    "method.act/accept-and-complete",
    "integration.command-completion",
    'completes commands with success as the string "true" or "false"',
    withCompletion((event) => ({ ...event, success: String(event.success) })),
  ),
  mutant(
    "message-not-string",
    "method.act/accept-and-complete",
    "integration.command-completion",
    "completes commands with message null",
    withCompletion((event) => ({ ...event, message: null })),
  ),
  mutant(
    "completion-seq-as-string",
    "method.act/accept-and-complete",
    "integration.command-completion",
    'completes commands with their commandSeq as a numeric string ("7")',
    withCompletion((event) => ({ ...event, commandSeq: String(event.commandSeq) })),
  ),
];
