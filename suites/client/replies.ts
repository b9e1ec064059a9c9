// Replies the client checks build around the request they answer.
import fc from "fast-check";
import { encode, validReply } from "../../generators/validReply.js";
import type { Contract } from "../../protocol/contract.js";
import type { SeenRequest } from "./context.js";
import { methodOf, requestIdOf } from "./judge.js";

const plainResult = fc.sample(validReply({ kinds: ["result"], encodings: false }), { numRuns: 1, seed: 1 })[0]!;

/** The plainest valid result for the request (its method's result shape, its id echoed). */
export const validResult = (seen: SeenRequest): string =>
  plainResult.render({ id: requestIdOf(seen), method: methodOf(seen) });

/** A valid result padded with insignificant spaces to exactly `bytes` bytes (before the LF). */
export function paddedResult(seen: SeenRequest, bytes: number): Buffer {
  const text = validResult(seen);
  const pad = bytes - Buffer.byteLength(text);
  return Buffer.from(`${text.slice(0, -1)}${" ".repeat(Math.max(0, pad))}}`);
}

/** A valid error reply whose message is multibyte text, `bytes` bytes in all but far fewer characters. */
export function multibyteError(seen: SeenRequest, contract: Contract, bytes: number): Buffer {
  const code = contract.codes["error.invalid-request"] ?? Object.values(contract.codes)[0]!;
  const empty = encode({ jsonrpc: contract.jsonrpc, id: requestIdOf(seen), error: { code, message: "" } });
  const head = empty.slice(0, -3);
  const tail = `"}}`;
  const room = bytes - Buffer.byteLength(head) - Buffer.byteLength(tail);
  const euro = "\u20ac"; // three bytes in UTF-8
  const fill = euro.repeat(Math.floor(room / 3)) + "x".repeat(room % 3);
  return Buffer.from(`${head}${fill}${tail}`);
}
