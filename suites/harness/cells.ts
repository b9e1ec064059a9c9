// The bridge's state space as the deep checks see it: named cells, each a state (or a moment
// in a history) where real bridges break. A cell is identified from what the bridge itself
// says (status occupancy, the events window, sequence numbers) together with what the model
// of the session expects, so no instrumentation of the bridge is needed. A run reports which
// cells its steps reached; --duration aims its time at the ones it has not.

/** The families a step can aim at; each cell belongs to one. */
export const FAMILIES = ["queue", "history", "cursor", "auth", "conn", "id", "command", "read", "race"] as const;
export type Family = (typeof FAMILIES)[number];

export interface Cell {
  id: string;
  family: Family;
  /** What the cell is, in the protocol's terms. */
  what: string;
}

const cell = (family: Family, name: string, what: string): Cell => ({ id: `${family}.${name}`, family, what });

/** Read boundaries a long line is made to cross, in KiB: the read buffers bridges commonly use. */
export const READ_BOUNDARIES_KIB = [4, 8, 16, 64] as const;

/** Connections opened in a row that count as "a few dozen": where a per-connection leak shows. */
export const CHURN_CONNECTIONS = 48;

/** How a client can end a connection: after a full exchange, mid-line, before reading the reply, by a reset. */
export const ENDINGS = ["after-line", "mid-line", "mid-reply", "by-reset"] as const;
export type Ending = (typeof ENDINGS)[number];

/** Connections ended in a row, each way in turn: what each ending leaves behind adds up past a few dozen. */
export const ENDED_CONNECTIONS = 64;

/** Total sizes (KiB) of the complete lines written in one write: read buffers again, and the 1 MiB line limit. */
export const BURST_KIB = [...READ_BOUNDARIES_KIB, 1024] as const;

/** A size in KiB as cell names write it: 64k, 1m. */
export const sizeName = (kib: number): string => (kib >= 1024 ? `${kib / 1024}m` : `${kib}k`);

/** Failed auth attempts in a row after which a lockout would show. */
export const AUTH_FAILURES = 3;

export const CELLS: readonly Cell[] = [
  cell("queue", "empty", "status reports no queued command"),
  cell("queue", "one", "status reports one queued command"),
  cell("queue", "max-minus-one", "status reports one below maxQueuedCommands"),
  cell("queue", "full", "the queue is at maxQueuedCommands (status says so, or act was rejected as full)"),
  cell("queue", "after-rejection", "an act right after one rejected as full"),
  cell("queue", "refilled", "the queue full again after it drained from a rejection"),
  cell("history", "empty", "status reports no retained event"),
  cell("history", "below-max", "the history holds some events, fewer than maxEvents"),
  cell("history", "exactly-max", "the history holds exactly maxEvents, none evicted yet"),
  cell("history", "evicting", "the history is full and events have been evicted from it"),
  cell("cursor", "before-oldest", "events after a cursor in the evicted range, below the oldest retained seq"),
  cell("cursor", "at-oldest", "events after the cursor just before the oldest retained seq"),
  cell("cursor", "inside", "events after a cursor inside the retained window"),
  cell("cursor", "at-newest", "events after the newest seq (nothing newer)"),
  cell("cursor", "past-newest", "events after a cursor beyond latestSeq"),
  cell("auth", "none", "a method other than auth on a connection that never authorized"),
  cell("auth", "after-one-failure", "a call after one wrong token"),
  cell("auth", "after-failures", `a call after ${AUTH_FAILURES} or more wrong tokens in a row`),
  cell("auth", "authorized-after-failures", `the right token after ${AUTH_FAILURES} or more wrong ones`),
  cell("auth", "failure-after-authorized", "a wrong token on a connection already authorized"),
  cell("conn", "one", "several steps served on one connection"),
  cell("conn", "two-interleaved", "requests alternating between two open connections"),
  cell("conn", "reconnect", "a step on a new connection after the previous one closed"),
  cell("conn", "churn", `${CHURN_CONNECTIONS} connections opened and closed in a row, then served`),
  cell("conn", "half-closed", "a request followed by the peer's FIN (half-close)"),
  cell("conn", "partial-line-at-close", "a connection closed with an unterminated line, then a new one served"),
  cell("conn", "ended-after-line", "a connection closed after a full exchange, then a new one served"),
  cell("conn", "ended-mid-line", "a connection closed halfway through a request line, then a new one served"),
  cell("conn", "ended-mid-reply", "a connection closed before its reply was read, then a new one served"),
  cell("conn", "ended-by-reset", "a connection ended by a reset (RST), then a new one served"),
  cell(
    "conn",
    "ended-many",
    `${ENDED_CONNECTIONS} connections ended each way in turn, then a new one served with the same limits`,
  ),
  cell("id", "repeated", "a request with the same id as the one before it on the connection"),
  cell("id", "across-methods", "one id on requests of different methods in a row on one connection"),
  cell("id", "across-connections", "an id used on a closed connection, again on a new one for another method"),
  cell("id", "string", "a string id"),
  cell("id", "integer", "an integer id"),
  cell("id", "fraction", "a number id with a fraction or exponent"),
  cell("id", "null", "the id null"),
  cell("id", "boolean", "a boolean id"),
  cell("id", "object", "an object id"),
  cell("id", "array", "an array id"),
  cell("command", "consecutive-appends", "two acts with append:true in a row"),
  cell("command", "every-advertised-type", "every advertised command type acted"),
  cell("command", "unknown-type", "a command type the bridge does not advertise"),
  cell("command", "extreme-integers", "integer fields at the safe-integer extremes"),
  cell("command", "extreme-identifiers", "identifier fields at their extremes (the empty string, a long one, 0)"),
  cell("command", "extreme-strings", "stringArg empty, long, or of astral and control characters"),
  cell("read", "split-character", "a multibyte character split across two TCP segments"),
  ...READ_BOUNDARIES_KIB.map((k) =>
    cell("read", `line-${k}k`, `a line over ${k} KiB, a multibyte character across its ${k} KiB boundary`),
  ),
  ...BURST_KIB.map((k) =>
    cell("read", `burst-${sizeName(k)}`, `complete lines over ${k} KiB in total in one write, each answered in order`),
  ),
  cell("race", "acts", "acts on two connections at once"),
  cell("race", "observe-completion", "observe on one connection while a command completes"),
  cell("race", "status-draining", "status read on one connection while the queue drains"),
];

export const CELL_IDS: ReadonlySet<string> = new Set(CELLS.map((c) => c.id));

/** Which cells steps reached, and why some could not be (a bridge that serves one connection, no token). */
export interface CellsReached {
  reached: string[];
  /** Cell id -> why it cannot be reached against this bridge or configuration. */
  unreachable?: Record<string, string>;
}

/** The cells one check reached, as its steps report them. */
export class Coverage {
  readonly reached = new Set<string>();
  readonly unreachable = new Map<string, string>();

  reach(id: string): void {
    if (!CELL_IDS.has(id)) throw new Error(`no state cell ${id}`);
    this.reached.add(id);
  }

  /** Marks every cell of `family` (or the cells listed) out of reach, with the reason. */
  cannot(ids: string[] | Family, reason: string): void {
    const list = typeof ids === "string" ? CELLS.filter((c) => c.family === ids).map((c) => c.id) : ids;
    for (const id of list) if (!this.reached.has(id)) this.unreachable.set(id, reason);
  }

  has(id: string): boolean {
    return this.reached.has(id);
  }

  /** Cells neither reached nor out of reach. */
  open(): Cell[] {
    return CELLS.filter((c) => !this.reached.has(c.id) && !this.unreachable.has(c.id));
  }

  toJSON(): CellsReached {
    const unreachable = [...this.unreachable].filter(([id]) => !this.reached.has(id));
    return {
      reached: CELLS.filter((c) => this.reached.has(c.id)).map((c) => c.id),
      ...(unreachable.length ? { unreachable: Object.fromEntries(unreachable) } : {}),
    };
  }
}

/** The queue cells a status reading reaches. */
export function queueCells(queued: number, max: number): string[] {
  const cells: string[] = [];
  if (queued === 0) cells.push("queue.empty");
  if (queued === 1) cells.push("queue.one");
  if (queued === max - 1) cells.push("queue.max-minus-one");
  if (queued === max) cells.push("queue.full");
  return cells;
}

/**
 * The history cell of a status reading: `evicted` says whether the model knows events have left
 * the history (true), knows none have (false), or cannot tell (undefined: the history was full
 * before it looked).
 */
export function historyCell(events: number, max: number, evicted: boolean | undefined): string | undefined {
  if (events === 0) return "history.empty";
  if (events < max) return "history.below-max";
  if (evicted === false) return "history.exactly-max";
  if (evicted === true) return "history.evicting";
  return undefined;
}

/** Where a cursor stands relative to the retained window [oldest, newest] (oldest undefined: nothing retained). */
export function cursorCell(cursor: number, oldest: number | undefined, newest: number): string | undefined {
  if (cursor > newest) return "cursor.past-newest";
  if (cursor === newest) return "cursor.at-newest";
  if (oldest === undefined) return undefined;
  if (cursor === oldest - 1) return "cursor.at-oldest";
  if (cursor < oldest - 1) return cursor > 0 ? "cursor.before-oldest" : undefined;
  return "cursor.inside";
}

/** The id cell of a request id's JSON type. */
export function idCell(id: unknown): string {
  if (id === null) return "id.null";
  if (Array.isArray(id)) return "id.array";
  switch (typeof id) {
    case "string":
      return "id.string";
    case "boolean":
      return "id.boolean";
    case "number":
      return Number.isInteger(id) ? "id.integer" : "id.fraction";
    default:
      return "id.object";
  }
}
