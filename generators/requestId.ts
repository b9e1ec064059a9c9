import fc from "fast-check";

export interface RequestIdConstraints {
  /** Allow arrays and objects as ids (JSON allows them; bridges must echo them). Default: true. */
  structured?: boolean;
  /** Allow null. Default: true. */
  nullable?: boolean;
  /** Deepest nesting of structured ids. Default: 2. */
  maxDepth?: number;
}

/** Caller-chosen request ids of every JSON type: unicode strings, large and negative numbers, nested values. */
export function requestId(constraints: RequestIdConstraints = {}): fc.Arbitrary<unknown> {
  const { structured = true, nullable = true, maxDepth = 2 } = constraints;
  const scalars: fc.Arbitrary<unknown>[] = [
    fc.string({ unit: "grapheme", maxLength: 40 }),
    fc.string({ unit: "binary", maxLength: 20 }).filter((s) => !/[\ud800-\udfff]/.test(s)),
    fc.integer(),
    fc.maxSafeInteger(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    fc.boolean(),
  ];
  if (nullable) scalars.push(fc.constant(null));
  const scalar = fc.oneof(...scalars);
  if (!structured) return scalar;
  return fc.oneof(
    { weight: 4, arbitrary: scalar },
    {
      weight: 1,
      arbitrary: fc
        .jsonValue({ maxDepth })
        .map((v) => JSON.parse(JSON.stringify(v)) as unknown)
        .filter((v) => nullable || v !== null),
    },
  );
}
