import { type Json, type JsonObject, ReferenceBridge } from "../reference/bridge.js";
import { type Mutant, mutant } from "./mutant.js";

/** The reference with every completion it records bent by `change`. */
const withCompletion = (change: (event: JsonObject) => JsonObject) =>
  class extends ReferenceBridge {
    protected override recordEvent(event: JsonObject): void {
      super.recordEvent(event.type === "command_completed" ? change(event) : event);
    }
  };

/** Mutants whose replies carry the right values in the wrong JSON form: a number through a double, a type changed. */
export const mutants: Mutant[] = [
  mutant(
    "id-through-double",
    "wire.response-envelope/precise-id",
    "wire.response-envelope",
    "reads the id into a double and writes that back: 12345678901234567890 comes back as 12345678901234567000",
    class extends ReferenceBridge {
      protected override idText(): string | undefined {
        return undefined;
      }
    },
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
