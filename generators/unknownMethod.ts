import fc from "fast-check";

export interface UnknownMethodConstraints {
  /** Names that are real methods, never generated. Default: the six AiControl methods. */
  known?: string[];
  /** Longest name. Default: 64 graphemes. */
  maxLength?: number;
}

const KNOWN = ["auth", "ping", "status", "observe", "events", "act"];
/** How a near miss changes a real name. */
const CHANGES = ["upper", "suffix", "prefix", "space"] as const;
const nearMissOf = (m: string, how: (typeof CHANGES)[number]) =>
  how === "upper" ? m.toUpperCase() : how === "suffix" ? `${m}s` : how === "prefix" ? `rpc.${m}` : ` ${m}`;

/** Non-empty method names that the contract does not define: near misses, case changes, unicode. */
export function unknownMethod(constraints: UnknownMethodConstraints = {}): fc.Arbitrary<string> {
  const { known = KNOWN, maxLength = 64 } = constraints;
  const nearMiss = fc
    .tuple(fc.constantFrom(...known), fc.constantFrom(...CHANGES))
    .map(([m, how]) => nearMissOf(m, how));
  const any = fc.string({ unit: "grapheme", minLength: 1, maxLength });
  const segmenter = new Intl.Segmenter(); // one per arbitrary: making one costs more than segmenting a name
  const graphemes = (m: string) => [...segmenter.segment(m)].length;
  return fc.oneof(nearMiss, any).filter((m) => m !== "" && !known.includes(m) && graphemes(m) <= maxLength);
}

/** Every near miss the generator draws from: each real name with each change (the classes a check tries first). */
export function unknownMethodNearMisses(known: readonly string[] = KNOWN): string[] {
  return CHANGES.flatMap((how) => known.map((m) => nearMissOf(m, how))).filter((m) => !known.includes(m));
}
