import type { Mutant } from "./mutant.js";

/** Mutants for the numbers a bridge advertises (status, queue and history limits, sequences). */
export const mutants: Mutant[] = [];
