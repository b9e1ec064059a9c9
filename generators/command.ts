import fc from "fast-check";
import { contract, type FieldKind } from "../protocol/contract.js";

export type { FieldKind };

/** The optional standard command fields, as the contract lists them: name, rule, and the JSON type it takes. */
export const COMMAND_FIELDS = contract.commandFields;

export interface CommandConstraints {
  /** Command types to draw from (e.g. the bridge's availableActions); random names are mixed in. Default: none, random only. */
  types?: string[];
  /** Also draw ill-typed values for the standard fields. Default: false. */
  illTyped?: boolean;
  /** Which standard fields to draw from (names, e.g. ["x"]). Default: all ten. */
  fields?: string[];
  /** Fewest and most standard fields in one command. Default: 0 and 3. */
  minFields?: number;
  maxFields?: number;
}

export interface Command {
  type: string;
  [field: string]: unknown;
}

/**
 * Well-typed values per kind; identifiers are project-defined, so every string (the empty one
 * included) and every integer counts. Built on first use: grapheme strings cost a table, and a run that lists rules needs none.
 */
const built = new Map<FieldKind, fc.Arbitrary<unknown>>();
const wellTyped = (kind: FieldKind): fc.Arbitrary<unknown> => {
  let arbitrary = built.get(kind);
  if (!arbitrary) built.set(kind, (arbitrary = wellTypedOf(kind)));
  return arbitrary;
};
const wellTypedOf = (kind: FieldKind): fc.Arbitrary<unknown> => {
  switch (kind) {
    case "identifier":
      return fc.oneof(fc.string({ maxLength: 12 }), fc.integer());
    case "integer":
      return fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.integer());
    case "string":
      return fc.string({ unit: "grapheme", maxLength: 40 });
    case "boolean":
      return fc.boolean();
  }
};

/**
 * Values of the wrong JSON type for each kind, one per equivalence class, cheapest to break a handler first: a
 * string where a number is read, the empty string, a fraction, then the other JSON types. An identifier is any
 * string or integer, so "" is none of its ill-typed values.
 */
export const ILL_TYPED: Record<FieldKind, readonly unknown[]> = {
  identifier: [1.5, true, null, [], {}],
  integer: ["1", "", 1.5, -0.25, true, null, [], {}, 1e300],
  string: [1, 0, true, null, [], { text: "x" }],
  boolean: [0, 1, "true", "", null, []],
};
const illTypedValue = (kind: FieldKind) => fc.constantFrom(...ILL_TYPED[kind]);

/** Project commands for act: a non-empty type plus up to a few standard fields, well- or ill-typed. */
export function command(constraints: CommandConstraints = {}): fc.Arbitrary<Command> {
  const { types = [], illTyped = false, fields: only, minFields = 0, maxFields = 3 } = constraints;
  const pool = only ? COMMAND_FIELDS.filter((f) => only.includes(f.field)) : COMMAND_FIELDS;
  const randomType = fc.string({ minLength: 1, maxLength: 16 }).filter((t) => t.trim() !== "");
  const type = types.length
    ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...types) }, { weight: 1, arbitrary: randomType })
    : randomType;
  const field = fc
    .constantFrom(...pool)
    .chain(({ field, kind }) =>
      (illTyped ? fc.oneof(wellTyped(kind), illTypedValue(kind)) : wellTyped(kind)).map(
        (value) => [field, value] as const,
      ),
    );
  return fc
    .record({
      type,
      fields: fc.uniqueArray(field, {
        minLength: minFields,
        maxLength: Math.min(maxFields, pool.length),
        selector: ([name]) => name,
      }),
    })
    .map(({ type, fields }) => ({ type, ...Object.fromEntries(fields) }));
}

/** Is this value well-typed for the field? */
export function isWellTyped(kind: FieldKind, value: unknown): boolean {
  switch (kind) {
    case "identifier":
      return typeof value === "string" || Number.isSafeInteger(value);
    case "integer":
      return Number.isSafeInteger(value);
    case "string":
      return typeof value === "string";
    case "boolean":
      return typeof value === "boolean";
  }
}
