import type { Check } from "./check.js";
import { wireChecks } from "./wire.js";
import { errorChecks } from "./errors.js";
import { methodChecks } from "./methods.js";
import { commandChecks } from "./commands.js";
import { statefulSession } from "./session.js";

/** Every check, in the order a run takes them: cheap and foundational first. */
export const allChecks: readonly Check[] = [...methodChecks, ...wireChecks, ...errorChecks, ...commandChecks, statefulSession];
