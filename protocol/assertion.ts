// What an oracle asserts about a reply: a small vocabulary of JSON comparisons, and how each reads.

/** A place in a JSON value: member names and array indexes; "#" stands for an array's length. */
export type JsonPath = readonly (string | number)[];

/**
 * What an assertion compares with: a JSON value, the value at `path` in the reply to the last
 * earlier request whose id is `ref` (or in the judged reply itself), or the endpoint the
 * reproducer connects to.
 */
export type Operand =
  | { value: unknown }
  | { ref: unknown; path?: JsonPath }
  /** The value at this path in the judged response itself. */
  | { here: JsonPath }
  /** The value at `path` in the reply to this request, sent when the assertion is judged (what holds now). */
  | { fresh: { method: string; params?: Record<string, unknown> }; path?: JsonPath }
  /** The address or port of the connection the judged reply came on: the endpoint as connected. */
  | { peer: "address" | "port" };

/**
 * One thing a reply must hold, at `path` in the judged response (with `of`, in the reply to the
 * last earlier request with that id; inside `every`, in each item).
 */
export type Assertion = { path?: JsonPath; of?: unknown } & (
  | { is: "integer" | "number" | "boolean" | "string" | "object" | "array" | "present" | "absent" }
  | { equals: unknown }
  /** Numbers compared by value (`plus` added to the right-hand side); == and != compare any JSON values. */
  | { op: "==" | "!=" | "<" | "<=" | ">" | ">="; than: Operand; plus?: number }
  | { every: Assertion[] }
  | { ascending: JsonPath }
  /** The array is the start of the operand's array (items compared at `by`, or whole). */
  | { prefixOf: Operand; by?: JsonPath }
  /** A string naming the address connected to: that address, a wildcard bind address, or a name resolving to it. */
  | { namesPeer: true }
  /** At least one of these lists holds whole. */
  | { anyOf: Assertion[][] }
);

const pathText = (path: readonly (string | number)[]) => path.join(".") || "the reply";

function operandText(than: Operand): string {
  if ("value" in than) return JSON.stringify(than.value);
  if ("peer" in than) return `the ${than.peer} connected to`;
  if ("here" in than) return pathText(than.here);
  if ("fresh" in than)
    return `${pathText(than.path ?? [])} of ${than.fresh.method} ${JSON.stringify(than.fresh.params ?? {})} asked then`;
  return `${pathText(than.path ?? [])} of the reply to ${JSON.stringify(than.ref)}`;
}

export function assertionText(a: Assertion): string {
  const where = `${a.of === undefined ? "" : `in the reply to ${JSON.stringify(a.of)}, `}${pathText(a.path ?? [])}`;
  if ("is" in a) return `${where} ${a.is === "absent" || a.is === "present" ? "is" : "is a JSON"} ${a.is}`;
  if ("equals" in a) return `${where} is ${JSON.stringify(a.equals)}`;
  if ("op" in a) return `${where} ${a.op} ${operandText(a.than)}${a.plus ? ` + ${a.plus}` : ""}`;

  if ("every" in a) return `every item of ${where}: ${a.every.map(assertionText).join(", ")}`;
  if ("ascending" in a) return `${where} ascending by ${pathText(a.ascending)}`;
  if ("prefixOf" in a)
    return `${where} is the start of ${operandText(a.prefixOf)}${a.by ? ` (by ${pathText(a.by)})` : ""}`;
  if ("namesPeer" in a) return `${where} names the address connected to`;
  return a.anyOf.map((all) => all.map(assertionText).join(" and ")).join(", or ");
}
