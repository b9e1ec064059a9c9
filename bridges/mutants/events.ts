import type { Mutant } from "./mutant.js";

/** Mutants for events paging, cursors, clamping, and replies kept under the line limit. */
export const mutants: Mutant[] = [];
