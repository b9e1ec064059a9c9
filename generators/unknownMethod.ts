import fc from "fast-check";

export interface UnknownMethodConstraints {
  /** Names that are real methods, never generated. Default: the six AiControl methods. */
  known?: string[];
  /** Longest name. Default: 64 graphemes. */
  maxLength?: number;
}

/** Non-empty method names that the contract does not define: near misses, case changes, unicode. */
export function unknownMethod(constraints: UnknownMethodConstraints = {}): fc.Arbitrary<string> {
  const { known = ["auth", "ping", "status", "observe", "events", "act"], maxLength = 64 } = constraints;
  const nearMiss = fc
    .tuple(fc.constantFrom(...known), fc.constantFrom("upper", "suffix", "prefix", "space"))
    .map(([m, how]) =>
      how === "upper" ? m.toUpperCase() : how === "suffix" ? `${m}s` : how === "prefix" ? `rpc.${m}` : ` ${m}`,
    );
  const any = fc.string({ unit: "grapheme", minLength: 1, maxLength });
  const segmenter = new Intl.Segmenter(); // one per arbitrary: making one costs more than segmenting a name
  const graphemes = (m: string) => [...segmenter.segment(m)].length;
  return fc.oneof(nearMiss, any).filter((m) => m !== "" && !known.includes(m) && graphemes(m) <= maxLength);
}
