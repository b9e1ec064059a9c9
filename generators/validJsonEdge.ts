import fc from "fast-check";
import { contract } from "../protocol/contract.js";

/**
 * Corners of RFC 8259 that strict parsers and lenient ones read differently, all valid JSON grammar:
 * "escaped-control" a control character escaped (\u0000, \n ...) inside the method name;
 * "lone-surrogate" an unpaired surrogate escape (\ud800) in the id, the method or a param (section 8.2:
 * grammatical, but what a receiver does with it is unpredictable);
 * "duplicate-key" a member name given twice (section 4: names SHOULD be unique; receivers differ).
 */
export type EdgeKind = "escaped-control" | "lone-surrogate" | "duplicate-key";
export type EdgePlace = "id" | "method" | "params";

export interface ValidJsonEdgeConstraints {
  /** Kinds to draw. Default: all three. */
  kinds?: EdgeKind[];
}

/**
 * A request line (without LF) and what a conforming reader may take from it:
 * `methods` the method names it may read (a name it may read as an unknown method included);
 * `ids` the ids it may read, as their JSON text.
 */
export interface ValidJsonEdge {
  kind: EdgeKind;
  place: EdgePlace;
  text: string;
  methods: string[];
  ids: string[];
}

const JSONRPC = JSON.stringify(contract.jsonrpc);
const line = (id: string, method: string, params = "{}") =>
  `{"jsonrpc":${JSONRPC},"id":${id},"method":${method},"params":${params}}`;

/** A string's JSON text with every character below U+0020 and every surrogate written as a \u escape. */
export function escapeAll(s: string): string {
  return `"${[...s]
    .map((c) => {
      const u = c.charCodeAt(0);
      if (c.length === 1 && (u < 0x20 || (u >= 0xd800 && u <= 0xdfff))) return `\\u${u.toString(16).padStart(4, "0")}`;
      return c === '"' || c === "\\" ? `\\${c}` : c;
    })
    .join("")}"`;
}

const SHORT: Record<number, string> = { 8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r" };

/** "ping" with control character `code` escaped at offset `at` (0..4), as \n-style short escape where one exists and
 * `short` asks for it, else as \u00XX; `suffix` follows. */
export function escapedControlEdge(code: number, at: number, short: boolean, suffix = ""): ValidJsonEdge {
  const method = `${"ping".slice(0, at)}${String.fromCharCode(code)}${"ping".slice(at)}${suffix}`;
  const escaped = (short && SHORT[code]) || `\\u${code.toString(16).padStart(4, "0")}`;
  const text = `"${"ping".slice(0, at)}${escaped}${"ping".slice(at)}${suffix}"`;
  return { kind: "escaped-control", place: "method", text: line(`"edge"`, text), methods: [method], ids: [`"edge"`] };
}

/** A ping carrying the unpaired surrogate(s) `s`, escaped, as its id, inside its method name, or in a param. */
export function loneSurrogateEdge(place: EdgePlace, s: string): ValidJsonEdge {
  const escaped = escapeAll(s);
  if (place === "id")
    return { kind: "lone-surrogate", place, text: line(escaped, `"ping"`), methods: ["ping"], ids: [escaped] };
  if (place === "method") {
    const method = `ping${s}`;
    return {
      kind: "lone-surrogate",
      place,
      text: line(`"edge"`, escapeAll(method)),
      methods: [method],
      ids: [`"edge"`],
    };
  }
  const text = line(`"edge"`, `"ping"`, `{"text":${escaped}}`);
  return { kind: "lone-surrogate", place, text, methods: ["ping"], ids: [`"edge"`] };
}

/** A request naming its id (a string and a number) or its method (ping and an unknown one) twice; `swap` the order. */
export function duplicateKeyEdge(place: "id" | "method", swap: boolean): ValidJsonEdge {
  const pair = <T>(a: T, b: T): [T, T] => (swap ? [b, a] : [a, b]);
  if (place === "id") {
    const [a, b] = pair(`"first"`, "2");
    const text = `{"jsonrpc":${JSONRPC},"id":${a},"method":"ping","id":${b},"params":{}}`;
    return { kind: "duplicate-key", place, text, methods: ["ping"], ids: [a, b] };
  }
  const [a, b] = pair("ping", "no.such.method");
  const text = `{"jsonrpc":${JSONRPC},"id":"edge","method":"${a}","params":{},"method":"${b}"}`;
  return { kind: "duplicate-key", place, text, methods: [a, b], ids: [`"edge"`] };
}

/** Where in "ping" an escaped control goes, and what follows the name (each in validJsonEdgeClasses). */
const CONTROL_AT = [0, 2, 4];
const CONTROL_SUFFIXES = ["", "x", "evil"];

const escapedControl = fc
  .tuple(
    fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0x1f })),
    fc.constantFrom(...CONTROL_AT),
    fc.boolean(),
    fc.constantFrom(...CONTROL_SUFFIXES),
  )
  .map(([code, at, short, suffix]) => escapedControlEdge(code, at, short, suffix));

const SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\udc00\ud800", "\ud800A", "a\udfff"];
const PLACES: EdgePlace[] = ["id", "method", "params"];

const loneSurrogate = fc
  .tuple(fc.constantFrom(...PLACES), fc.constantFrom(...SURROGATES))
  .map(([place, s]) => loneSurrogateEdge(place, s));

/**
 * Every constant each kind draws from, each at least once: a NUL a C string ends at, a trimmable LF and the last
 * control, short and \u escapes, at every place in the name and with every suffix; every unpaired surrogate, in
 * every place; both duplicate names in both orders. The classes a check tries first.
 */
export function validJsonEdgeClasses(): ValidJsonEdge[] {
  return [
    escapedControlEdge(0, 4, false), // "ping" then NUL: a reader of C strings runs ping
    escapedControlEdge(0x0a, 4, true), // a trailing LF a lenient reader trims
    escapedControlEdge(0x1f, 2, false, "x"),
    escapedControlEdge(0, 0, true, "evil"),
    ...SURROGATES.map((s, i) => loneSurrogateEdge(PLACES[i % PLACES.length]!, s)),
    ...(["id", "method"] as const).flatMap((place) => [false, true].map((swap) => duplicateKeyEdge(place, swap))),
  ];
}

const duplicateKey = fc
  .tuple(fc.constantFrom<"id" | "method">("id", "method"), fc.boolean())
  .map(([place, swap]) => duplicateKeyEdge(place, swap));

const KINDS: Record<EdgeKind, fc.Arbitrary<ValidJsonEdge>> = {
  "escaped-control": escapedControl,
  "lone-surrogate": loneSurrogate,
  "duplicate-key": duplicateKey,
};

/** Valid-grammar requests at RFC 8259's edges, each with the readings a bridge may take. */
export function validJsonEdge(constraints: ValidJsonEdgeConstraints = {}): fc.Arbitrary<ValidJsonEdge> {
  const { kinds = ["escaped-control", "lone-surrogate", "duplicate-key"] } = constraints;
  return fc.oneof(...kinds.map((k) => KINDS[k]));
}
