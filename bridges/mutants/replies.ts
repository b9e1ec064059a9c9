import { ReferenceBridge } from "../reference/bridge.js";
import { type Mutant, mutant } from "./mutant.js";

/** Mutants whose replies carry the right values in the wrong JSON form: a number through a double, a type changed. */
export const mutants: Mutant[] = [
  mutant(
    "id-through-double",
    "wire.response-envelope/precise-id",
    "wire.response-envelope",
    "reads the id into a double and writes that back: 12345678901234567890 comes back as 12345678901234567000",
    class extends ReferenceBridge {
      protected override idText(): string | undefined {
        return undefined;
      }
    },
  ),
  mutant(
    "refuses-out-of-range-ids",
    "wire.response-envelope/precise-id",
    "wire.response-envelope",
    "refuses a request whose id is a number beyond a double's range (1e400) as a parse error",
    class extends ReferenceBridge {
      protected override parse(line: Buffer): unknown {
        const parsed = super.parse(line) as { id?: unknown } | null;
        if (typeof parsed?.id === "number" && !Number.isFinite(parsed.id)) throw new Error("number out of range");
        return parsed;
      }
    },
    "warn",
  ),
];
