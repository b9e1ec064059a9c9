// The model of a deep session: what the check knows of the bridge's state over one or two connections (the queue,
// the history, the connections and their authorization), updated from what the bridge said. No I/O here: the real
// side (real.ts) talks to the bridge, the steps (steps/) judge what came back against this.

import type { Command } from "../../../generators/command.js";
import type { Slot } from "../../../generators/sessionStep.js";
import type { Completion, EventsResult } from "../events.js";

/**
 * The bridge's history as the check has seen it since the bridge last started (cells only; no verdict rests on it):
 * a case starts on a fresh bridge where this tool owns one, so this is the case's own; at an endpoint it spans cases.
 */
export interface SinceStart {
  /** Advertised command types acted so far. */
  typesActed: Set<string>;
  /** Events evicted from the history: false none (it was seen below maxEvents), true some, undefined not known. */
  evicted: boolean | undefined;
  /** latestSeq when the history was first seen full: events after it evict older ones. */
  fullAt?: number;
}

export const sinceStart = (typesActed = new Set<string>()): SinceStart => ({ typesActed, evicted: undefined });

/** One connection of the model. */
export interface SlotState {
  /** undefined: not known (after a wrong token on an authorized connection, whose effect the contract leaves open). */
  auth: boolean | undefined;
  failures: number;
  authorizedOnce: boolean;
  lastId?: unknown;
  served: number;
}

/** A status reply, as judged. */
export interface Status {
  queuedCommands: number;
  maxQueuedCommands: number;
  events: number;
  maxEvents: number;
  observationSeq: number;
}

export class DeepModel {
  readonly slots: SlotState[] = [];
  /** Accepted commands of this case by commandSeq, and the completions read for them. */
  readonly accepted = new Map<number, Command>();
  readonly completions = new Map<number, Completion[]>();
  /** Events that fell into gaps before the follower read them (a small history dropped them). */
  unseen = 0;
  /** The last seq the follower read. */
  followCursor = 0;
  commandSeq = Number.NEGATIVE_INFINITY;
  observationSeq = Number.NEGATIVE_INFINITY;
  /** The limits status advertised first: they must hold still. */
  limits?: { maxQueuedCommands: number; maxEvents: number };
  lastSlot?: Slot;
  /** Whether the last act was rejected as full. */
  justRejected = false;
  lastAppend = false;
  private nextId = 0;

  constructor(
    readonly life: SinceStart,
    /** The command types the bridge advertises. */
    readonly types: readonly string[],
    /** Whether the model has a second connection (the bridge serves two at once). */
    readonly two: boolean,
    readonly tokenConfigured: boolean,
  ) {}

  /** A new request id: `prefix-N`, N counting over the session. */
  id(prefix: string): string {
    return `${prefix}-${++this.nextId}`;
  }

  /** A connection opened afresh: authorized if no token is configured or once `authorize` went through. */
  opened(slot: Slot): SlotState {
    const state: SlotState = { auth: !this.tokenConfigured, failures: 0, authorizedOnce: false, served: 0 };
    this.slots[slot] = state;
    return state;
  }

  /** Whether every accepted command's completion has been read. */
  get allCompleted(): boolean {
    return [...this.accepted.keys()].every((k) => this.completions.has(k));
  }

  /** Takes note of a page of events the follower read: completions by commandSeq, and gaps before the page. */
  record(events: EventsResult["events"]): void {
    if (events.length && events[0]!.seq > this.followCursor + 1) this.unseen += events[0]!.seq - this.followCursor - 1;
    for (const { seq, event } of events) {
      this.followCursor = seq;
      if (event.type !== "command_completed") continue;
      const key = Number(event.commandSeq);
      const list = this.completions.get(key) ?? [];
      list.push({ seq, commandSeq: event.commandSeq, success: event.success, message: event.message, event });
      this.completions.set(key, list);
    }
  }
}
