import type { Mutant } from "./mutant.js";

/** Mutants for limits in bytes, RFC 8259 JSON, strict replies and the byte stream. */
export const mutants: Mutant[] = [];
