import { contract } from "../../protocol/contract.js";
import {
  CODES,
  type Json,
  type JsonObject,
  ReferenceBridge,
  type RetainedEvent,
  RpcError,
} from "../reference/bridge.js";
import { type Mutant, mutant } from "./mutant.js";

type Page = { latestSeq: number; events: RetainedEvent[] };

/** A history larger than the clamp's upper edge, so a page of more than it can be asked for. */
/** A history that holds more than one page of the largest limit, so a limit at the clamp's upper edge shows. */
const LARGE_HISTORY = { maxEvents: contract.limits.eventsLimitMax + 20 };

/** Completes echo with the whole stringArg as its message, however long. */
class UnboundedEcho extends ReferenceBridge {
  protected override execute(queued: { seq: number; command: JsonObject }): JsonObject {
    const done = super.execute(queued);
    if (queued.command.type === "echo" && typeof queued.command.stringArg === "string")
      done.message = queued.command.stringArg;
    return done;
  }

  /** The events page before replies were bounded: every selected event, however long the line. */
  protected unboundedPage(params: JsonObject): Page {
    const afterSeq = (params.afterSeq as number | undefined) ?? 0;
    const limit = (params.limit as number | undefined) ?? 100;
    const { eventsLimitMin, eventsLimitMax } = contract.limits;
    const clamped = Math.min(Math.max(limit, eventsLimitMin), eventsLimitMax);
    return { latestSeq: this.eventSeq, events: this.history.filter((e) => e.seq > afterSeq).slice(0, clamped) };
  }
}

/** Mutants for events paging, cursors, clamping, and replies kept under the line limit. */
export const mutants: Mutant[] = [
  mutant(
    "newest-page",
    "method.events/first-page",
    "method.events",
    "a page holds the newest events after the cursor instead of the first",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        const all = super.events({ ...params, limit: contract.limits.eventsLimitMax }, id) as unknown as Page;
        const page = super.events(params, id) as unknown as Page;
        return { ...page, events: all.events.slice(-page.events.length || all.events.length) } as unknown as Json;
      }
    },
  ),
  mutant(
    "limit-clamped-at-499",
    "method.events/limit-max",
    "method.events",
    "clamps limit one below the contract's upper edge",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        const { limit } = params;
        const below = contract.limits.eventsLimitMax - 1;
        return super.events(typeof limit === "number" ? { ...params, limit: Math.min(limit, below) } : params, id);
      }
    },
    "fail",
    LARGE_HISTORY,
  ),
  mutant(
    "limit-clamped-at-501",
    "method.events/limit-max",
    "method.events",
    "clamps limit one above the contract's upper edge",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        const page = super.events(params, id) as unknown as Page;
        const max = contract.limits.eventsLimitMax;
        if (typeof params.limit !== "number" || params.limit <= max || page.events.length < max) return page as never;
        const next = this.history.find((e) => e.seq > page.events[page.events.length - 1]!.seq);
        return { ...page, events: next ? [...page.events, next] : page.events } as unknown as Json;
      }
    },
    "fail",
    LARGE_HISTORY,
  ),
  mutant(
    "limit-floor-two",
    "method.events/cursor-and-limit",
    "method.events",
    "clamps limit one above the contract's lower edge, so a page never holds just one event",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        const { limit } = params;
        const floor = contract.limits.eventsLimitMin + 1;
        // Only a valid limit is bent: an ill-typed one is still rejected as invalid params.
        return super.events(
          Number.isSafeInteger(limit) ? { ...params, limit: Math.max(limit as number, floor) } : params,
          id,
        );
      }
    },
  ),
  mutant(
    "negative-cursor-rejected",
    "method.events/cursor-edges",
    "method.events",
    "answers a negative afterSeq with -32602",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        if (typeof params.afterSeq === "number" && params.afterSeq < 0)
          throw new RpcError(CODES.invalidParams, "Invalid params: afterSeq must not be negative");
        return super.events(params, id);
      }
    },
  ),
  mutant(
    "absent-cursor-reads-nothing",
    "method.events/cursor-edges",
    "method.events",
    "without afterSeq, reads from latestSeq (an empty page) instead of from the oldest event",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        return super.events(params.afterSeq === undefined ? { ...params, afterSeq: this.eventSeq } : params, id);
      }
    },
  ),
  mutant(
    "no-latest-seq-when-empty",
    "method.events/cursor-edges",
    "method.events",
    "leaves latestSeq out when nothing is newer than the cursor",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        const page = super.events(params, id) as unknown as Page;
        return (page.events.length ? page : { events: [] }) as unknown as Json;
      }
    },
  ),
  mutant(
    "latest-seq-echoes-cursor",
    "method.events/cursor-edges",
    "method.events",
    "when nothing is newer, reports the cursor as latestSeq",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        const page = super.events(params, id) as unknown as Page;
        const afterSeq = params.afterSeq;
        return (page.events.length || typeof afterSeq !== "number"
          ? page
          : { ...page, latestSeq: afterSeq }) as unknown as Json;
      }
    },
  ),
  mutant(
    "seq-as-string",
    "method.events/cursor-edges",
    "method.events",
    "writes each event's seq as a string",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        const page = super.events(params, id) as unknown as Page;
        return { ...page, events: page.events.map((e) => ({ ...e, seq: String(e.seq) })) } as unknown as Json;
      }
    },
  ),
  mutant(
    "event-as-text",
    "method.events/cursor-edges",
    "method.events",
    "writes each event as a JSON string instead of an object",
    class extends ReferenceBridge {
      protected override events(params: JsonObject, id: Json = null): Json {
        const page = super.events(params, id) as unknown as Page;
        return {
          ...page,
          events: page.events.map((e) => ({ ...e, event: JSON.stringify(e.event) })),
        } as unknown as Json;
      }
    },
  ),
  mutant(
    "unbounded-event-pages",
    "method.events/large-messages",
    "wire.line-limit",
    "echoes a stringArg of any length into its completion message and pages events whatever the line length",
    class extends UnboundedEcho {
      protected override events(params: JsonObject, _id: Json = null): Json {
        super.events(params); // validates the params
        return this.unboundedPage(params) as unknown as Json;
      }
    },
  ),
  mutant(
    "empty-page-when-too-long",
    "method.events/large-messages",
    "method.events",
    "keeps long completion messages and answers a page that would not fit in one line with no events",
    class extends UnboundedEcho {
      protected override events(params: JsonObject, id: Json = null): Json {
        super.events(params, id); // validates the params
        const page = this.unboundedPage(params);
        const line = JSON.stringify(this.resultResponse(id, page as unknown as Json));
        return (Buffer.byteLength(line) > this.options.maxLineBytes
          ? { ...page, events: [] }
          : page) as unknown as Json;
      }
    },
  ),
];
