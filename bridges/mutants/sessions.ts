import type { Mutant } from "./mutant.js";

/** Mutants for authorization near misses and sequences across connections. */
export const mutants: Mutant[] = [];
