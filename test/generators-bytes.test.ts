import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memberJsonText } from "../bridges/reference/idText.js";
import { DEEP_ID, type DeepNesting, deepNesting, deepNestingText } from "../generators/deepNesting.js";
import { FILLER, LIMIT_ID, limitLine, limitLineBytes } from "../generators/limitLine.js";
import { exactDecimal, lostInDouble, preciseNumber } from "../generators/preciseNumber.js";
import { validJsonEdge } from "../generators/validJsonEdge.js";
import { contract } from "../protocol/contract.js";
import { Fault } from "../suites/harness/check.js";
import { judgeResponse, memberText, repeatedName, sameJsonValue } from "../suites/harness/judge.js";

// Each generator documents what it promises (in its doc comments and constraints object); these tests hold it to that.

const RUNS = { numRuns: 200 };
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
const seen = <T, U>(arb: fc.Arbitrary<T>, f: (v: T) => U, n = 500) =>
  new Set(fc.sample(arb, { numRuns: n, seed: 7 }).map(f));

describe("limitLine", () => {
  it("draws every width and padding, exact-limit lines and lines over it, excess within maxExcess", () => {
    fc.assert(
      fc.property(limitLine(), ({ width, excess, padding }) => {
        expect([1, 2, 3, 4]).toContain(width);
        expect(["chars", "spaces", "cr"]).toContain(padding);
        expect(Number.isInteger(excess) && excess >= 0 && excess <= 4).toBe(true);
      }),
      RUNS,
    );
    expect(seen(limitLine(), (l) => l.width)).toEqual(new Set([1, 2, 3, 4]));
    expect(seen(limitLine(), (l) => l.padding)).toEqual(new Set(["chars", "spaces", "cr"]));
    expect(seen(limitLine(), (l) => Math.min(l.excess, 1))).toEqual(new Set([0, 1]));
  });

  it("honours its constraints, maxExcess 0 included", () => {
    const arb = limitLine({ widths: [3], paddings: ["cr"], maxExcess: 0 });
    fc.assert(
      fc.property(arb, (l) => {
        expect(l).toEqual({ width: 3, padding: "cr", excess: 0 });
      }),
      RUNS,
    );
    fc.assert(
      fc.property(limitLine({ maxExcess: 100 }), (l) => {
        expect(l.excess).toBeLessThanOrEqual(100);
      }),
      RUNS,
    );
  });
});

describe("limitLineBytes", () => {
  /** The promise for one line and limit. */
  function checkLine(
    line: { width: 1 | 2 | 3 | 4; excess: number; padding: "chars" | "spaces" | "cr" },
    limit: number,
  ) {
    const bytes = limitLineBytes(line, limit);
    // Exactly limit + excess bytes before one LF, at the end.
    expect(bytes.indexOf(0x0a)).toBe(bytes.length - 1);
    const payload = bytes.subarray(0, -1);
    expect(payload.length).toBe(limit + line.excess);
    // Strict UTF-8, and a valid ping (trailing whitespace is JSON whitespace).
    const text = strictUtf8.decode(payload);
    const request = JSON.parse(text) as { id: unknown; method: unknown; params: { text: string } };
    expect(request).toMatchObject({ jsonrpc: contract.jsonrpc, id: LIMIT_ID, method: "ping" });
    // The string: fewer than `width` ASCII letters, then characters of `width` bytes only.
    const filler = line.width === 1 ? request.params.text : request.params.text.replace(/^a*/, "");
    expect(request.params.text.length - filler.length).toBeLessThan(line.width);
    expect([...filler].every((c) => c === FILLER[line.width])).toBe(true);
    expect(Buffer.byteLength(FILLER[line.width])).toBe(line.width);
    // Padding: the JSON text ends at the limit (or one short, for an exact line) and whitespace fills the rest.
    const body = text.replace(/[ \r]+$/, "");
    if (line.padding === "chars") expect(body).toBe(text);
    else {
      expect(Buffer.byteLength(body)).toBe(line.excess === 0 ? limit - 1 : limit);
      expect(text.endsWith(line.padding === "cr" ? "\r" : " ")).toBe(true);
      expect(text.slice(body.length, -1)).toMatch(/^ *$/);
    }
    return text;
  }

  it("at the 1 MiB default: exact for every width and padding, and over by the excess", () => {
    for (const width of [1, 2, 3, 4] as const)
      for (const padding of ["chars", "spaces", "cr"] as const)
        for (const excess of [0, 1, 4]) checkLine({ width, padding, excess }, contract.limits.maxLineBytes);
  });

  it("keeps its promise for small custom limits", () => {
    fc.assert(
      fc.property(limitLine({ maxExcess: 50 }), fc.integer({ min: 120, max: 3000 }), (line, limit) => {
        checkLine(line, limit);
      }),
      RUNS,
    );
  });

  it("a line over the limit in 2- to 4-byte characters is under it in UTF-16 units (what counting them misses)", () => {
    fc.assert(
      fc.property(limitLine({ widths: [2, 3, 4], paddings: ["chars"], maxExcess: 4 }), (line) => {
        const text = checkLine(line, 4096);
        expect(text.length).toBeLessThanOrEqual(4096);
      }),
      RUNS,
    );
  });

  it("throws RangeError when the limit cannot hold the request", () => {
    expect(() => limitLineBytes({ width: 1, excess: 0, padding: "chars" }, 40)).toThrow(RangeError);
  });
});

describe("deepNesting", () => {
  /** Nesting depth of a JSON text, counted without recursion (strings hold no brackets here). */
  const depthOf = (text: string) => {
    let depth = 0;
    let max = 0;
    for (const c of text) {
      if (c === "[" || c === "{") max = Math.max(max, ++depth);
      else if (c === "]" || c === "}") depth--;
    }
    return max;
  };

  it("draws depths within bounds, every place and bracket, and the maximum itself", () => {
    fc.assert(
      fc.property(deepNesting(), ({ depth }) => {
        expect(depth >= 1_000 && depth <= 10_000).toBe(true);
      }),
      RUNS,
    );
    expect(seen(deepNesting(), (n) => n.place)).toEqual(new Set(["params", "root", "unbalanced"]));
    expect(seen(deepNesting(), (n) => n.bracket)).toEqual(new Set(["array", "object"]));
    expect(seen(deepNesting(), (n) => n.depth === 10_000)).toContain(true);
    const arb = deepNesting({ minDepth: 5, maxDepth: 9, places: ["root"], brackets: ["object"] });
    fc.assert(
      fc.property(arb, (n) => {
        expect(n.place).toBe("root");
        expect(n.bracket).toBe("object");
        expect(n.depth >= 5 && n.depth <= 9).toBe(true);
      }),
      RUNS,
    );
  });

  it("params and root are valid JSON nested as deep as asked; unbalanced is not JSON", () => {
    fc.assert(
      fc.property(deepNesting({ minDepth: 1, maxDepth: 3000 }), (n: DeepNesting) => {
        const text = deepNestingText(n);
        if (n.place === "unbalanced") {
          expect(parses(text)).toBe(false);
          expect(depthOf(text)).toBe(n.depth);
        } else if (n.place === "root") {
          expect(parses(text)).toBe(true);
          expect(depthOf(text)).toBe(n.depth);
        } else {
          // The envelope and params add two levels around the nesting.
          expect(JSON.parse(text)).toMatchObject({ jsonrpc: contract.jsonrpc, id: DEEP_ID, method: "ping" });
          expect(depthOf(text)).toBe(n.depth + 2);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe("validJsonEdge", () => {
  it("every line is valid JSON with no raw control characters or surrogates, read as one of its readings", () => {
    fc.assert(
      fc.property(validJsonEdge(), (edge) => {
        expect(edge.text).not.toMatch(/[\u0000-\u001f\ud800-\udfff]/);
        const request = JSON.parse(edge.text) as { method: string; id: unknown };
        // JSON.parse takes the last of duplicate names: one reading; the first is the other.
        expect(edge.methods).toContain(request.method);
        expect(edge.ids.map((t) => JSON.parse(t) as unknown)).toContainEqual(request.id);
      }),
      RUNS,
    );
  });

  it("escaped controls and lone surrogates sit where the kind says; duplicates name a member twice", () => {
    fc.assert(
      fc.property(validJsonEdge(), (edge) => {
        const request = JSON.parse(edge.text) as Record<string, unknown>;
        const value = JSON.stringify(request[edge.place]);
        if (edge.kind === "escaped-control") {
          expect(request.method).toMatch(/[\u0000-\u001f]/);
          expect(edge.methods).toHaveLength(1);
        }
        if (edge.kind === "lone-surrogate") expect(value).toMatch(/\\ud[89a-f][0-9a-f]{2}/);
        if (edge.kind === "duplicate-key") {
          expect(edge.text.split(`"${edge.place}":`)).toHaveLength(3);
          expect(edge.place === "id" ? edge.ids : edge.methods).toHaveLength(2);
        }
      }),
      RUNS,
    );
    expect(seen(validJsonEdge(), (e) => `${e.kind}/${e.place}`)).toEqual(
      new Set([
        "escaped-control/method",
        "lone-surrogate/id",
        "lone-surrogate/method",
        "lone-surrogate/params",
        "duplicate-key/id",
        "duplicate-key/method",
      ]),
    );
    expect(seen(validJsonEdge({ kinds: ["duplicate-key"] }), (e) => e.kind)).toEqual(new Set(["duplicate-key"]));
  });
});

describe("preciseNumber", () => {
  it("every text is an RFC 8259 number that a double gives back as another number (or none)", () => {
    fc.assert(
      fc.property(preciseNumber(), ({ kind, text }) => {
        expect(text).toMatch(/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/);
        expect(exactDecimal(text)).toBeDefined();
        expect(lostInDouble(text)).toBe(true);
        if (kind === "big-integer") {
          const n = BigInt(text);
          expect(n > 2n ** 53n || n < -(2n ** 53n)).toBe(true);
        }
      }),
      RUNS,
    );
    expect(seen(preciseNumber(), (p) => p.kind)).toEqual(new Set(["big-integer", "long-fraction", "out-of-range"]));
  });

  it("honours kinds and maxDigits", () => {
    fc.assert(
      fc.property(preciseNumber({ kinds: ["big-integer"], maxDigits: 20 }), ({ kind, text }) => {
        expect(kind).toBe("big-integer");
        expect(text.replace("-", "").length).toBeLessThanOrEqual(20);
      }),
      RUNS,
    );
  });
});

describe("exactDecimal", () => {
  it("is equal exactly for texts of the same value", () => {
    const same = [
      ["1", "1.0", "1e0", "10E-1", "0.1e1", "100e-2"],
      ["0", "-0", "0.0", "0e5", "-0.000e-3"],
      ["12345678901234567890", "1.234567890123456789e19", "123456789012345678900e-1"],
    ];
    for (const group of same) expect(new Set(group.map(exactDecimal)).size).toBe(1);
    expect(exactDecimal("12345678901234567890")).not.toBe(exactDecimal("12345678901234567000"));
    expect(exactDecimal("-1")).not.toBe(exactDecimal("1"));
    expect(exactDecimal("1e400")).not.toBe(exactDecimal("1e401"));
  });

  it("compares integers as BigInt does, whatever the notation", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }),
        (a, b) => {
          expect(exactDecimal(`${a}.000`)).toBe(exactDecimal(`${a}`));
          if (a !== 0n) expect(exactDecimal(`${a}000e-3`)).toBe(exactDecimal(`${a}`)); // 0000e-3 is not JSON
          expect(exactDecimal(`${a}`) === exactDecimal(`${b}`)).toBe(a === b);
        },
      ),
      RUNS,
    );
  });

  it("is undefined for what is not a JSON number", () => {
    for (const t of ["01", "+1", ".5", "1.", "NaN", "Infinity", "1e", "0x10", "", "null", '"1"'])
      expect(exactDecimal(t)).toBeUndefined();
  });
});

describe("memberText", () => {
  it("finds a member's JSON text as written, the last of duplicates, past nested values and strings", () => {
    expect(memberText('{"jsonrpc":"2.0","id":12345678901234567890,"result":{}}', "id")).toBe("12345678901234567890");
    expect(memberText('{ "a" : [1,{"id":2}] , "id" : 1e400 }', "id")).toBe("1e400");
    expect(memberText('{"x":"}\\"id\\":3","id":"a\\"b"}', "id")).toBe('"a\\"b"');
    expect(memberText('{"id":1,"id":2}', "id")).toBe("2");
    expect(memberText('{"id":{"id":[1]}}', "id")).toBe('{"id":[1]}');
    expect(memberText('{"result":{}}', "id")).toBeUndefined();
  });

  it("gives back the text of any JSON value placed as a member", () => {
    fc.assert(
      fc.property(fc.json(), fc.json(), (value, other) => {
        const text = `{"before":${other},"id":${value},"after":${other}}`;
        expect(memberText(text, "id")).toBe(value);
      }),
      RUNS,
    );
  });
});

describe("the reference bridge's memberJsonText", () => {
  it("reads a member's text as the judge's memberText does", () => {
    for (const text of [
      '{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping","params":{}}',
      '{ "a" : [1,{"id":2}] , "id" : 1e400 }',
      '{"x":"}\\"id\\":3","id":"a\\"b"}',
      '{"id":1,"id":2}',
      '{"\\u0069d":[-0.0]}',
      '{"result":{}}',
      "[1]",
    ])
      expect(memberJsonText(text, "id")).toBe(memberText(text, "id"));
    fc.assert(
      fc.property(fc.json(), fc.json(), (value, other) => {
        const text = `{"before":${other},"id":${value},"after":${other}}`;
        expect(memberJsonText(text, "id")).toBe(value);
      }),
      RUNS,
    );
  });
});

describe("sameJsonValue", () => {
  it("compares numbers by exact value, whatever their spelling, and keeps JSON types apart", () => {
    const same = [
      ["1", "1.0"],
      ["100", "1e2"],
      ["0", "-0"],
      ["12345678901234567890", "1.234567890123456789e19"],
      ["[12345678901234567890]", "[ 12345678901234567890 ]"],
      ['{"n":1e400,"s":"x"}', '{"s":"x","n":10e399}'],
    ];
    for (const [a, b] of same) expect(sameJsonValue(a!, b!)).toBe(true);
    const other = [
      ["12345678901234567890", "12345678901234567000"],
      ["-9007199254740993", "-9007199254740992"],
      ["1e400", "null"],
      ["1", '"1"'],
      ["[1]", "1"],
      ['{"n":1}', '{"m":1}'],
      ['"12"', '"13"'],
      ["1", "not json"],
    ];
    for (const [a, b] of other) expect(sameJsonValue(a!, b!)).toBe(false);
  });
});

describe("judgeResponse on the bytes of a reply", () => {
  const pong = `{"jsonrpc":${JSON.stringify(contract.jsonrpc)},"id":1,"result":{"ok":true}}`;
  const ruleOf = (bytes: Buffer) => {
    try {
      judgeResponse(bytes, 1, contract);
      return "pass";
    } catch (err) {
      return err instanceof Fault ? err.detail.rule : String(err);
    }
  };

  it("fails a reply that starts with a byte order mark on wire.ndjson: well-formed UTF-8, but not JSON", () => {
    expect(ruleOf(Buffer.from(`\ufeff${pong}`))).toBe("wire.ndjson");
    expect(ruleOf(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(pong)]))).toBe("wire.ndjson");
  });

  it("passes a CR before the LF (JSON whitespace), fails malformed UTF-8 on wire.utf8", () => {
    expect(ruleOf(Buffer.from(`${pong}\r`))).toBe("pass");
    expect(ruleOf(Buffer.from(pong))).toBe("pass");
    expect(ruleOf(Buffer.concat([Buffer.from(pong), Buffer.from([0xc0, 0xaf])]))).toBe("wire.utf8");
  });
});

describe("repeatedName", () => {
  it("finds a name an object holds twice, at any depth, and nothing in strings or across objects", () => {
    expect(repeatedName('{"a":1,"a":2}')).toBe("a");
    expect(repeatedName('{"k":{"x":1,"y":[1,"x"],"x":3}}')).toBe("x");
    expect(repeatedName('{"a\\u0062":1,"ab":2}')).toBe("ab");
    expect(repeatedName('{"a":{"b":1},"b":2}')).toBeUndefined();
    expect(repeatedName('{"a":[{"x":1},{"x":2}]}')).toBeUndefined();
    expect(repeatedName('{"s":"{\\"q\\":1,\\"q\\":2}","a":"\\"b","b":1}')).toBeUndefined();
  });

  it("finds none in what JSON.stringify writes, and the one it was given when a name is repeated", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.json()), fc.string(), (object, name) => {
        const text = JSON.stringify(object);
        expect(repeatedName(text)).toBeUndefined();
        const twice = `{${JSON.stringify(name)}:1,${text.slice(1, -1)}${text.length > 2 ? "," : ""}${JSON.stringify(name)}:2}`;
        expect(repeatedName(twice)).toBe(name);
      }),
      RUNS,
    );
  });
});
