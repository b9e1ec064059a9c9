import fc from "fast-check";
import { contract } from "../protocol/contract.js";
import { type RequestIdConstraints, requestId } from "./requestId.js";

export interface ValidRequestConstraints {
  /** Methods to call. Default: ["ping"]. */
  methods?: string[];
  /** Constraints on the ids. Default: every JSON type. */
  ids?: RequestIdConstraints;
}

export interface ValidRequest {
  jsonrpc: string;
  id: unknown;
  method: string;
  params: Record<string, unknown>;
}

/** Well-formed requests for the positive side of every rule. */
export function validRequest(constraints: ValidRequestConstraints = {}): fc.Arbitrary<ValidRequest> {
  const { methods = ["ping"], ids } = constraints;
  return fc.record({
    jsonrpc: fc.constant(contract.jsonrpc),
    id: requestId(ids),
    method: fc.constantFrom(...methods),
    params: fc.constant({}),
  });
}
