// The bench's figures: each kept for BENCHMARKS.md and printed beside its target as it is measured.

export interface Figure {
  figure: string;
  samples: number[];
  unit: string;
  digits: number;
  target: string;
  /** Whether the median meets the target; undefined for a figure without one. */
  ok?: (median: number) => boolean;
}

export const figures: Figure[] = [];
export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
export const fmt = (x: number, f: Figure) => `${x.toFixed(f.digits)}${f.unit}`;
export const verdictOf = (f: Figure) => (f.ok === undefined ? "" : f.ok(median(f.samples)) ? "met" : "MISSED");

const NAME_WIDTH = 64;
export function figure(f: Figure): void {
  figures.push(f);
  const m = median(f.samples);
  const spread =
    f.samples.length > 1 ? `  (min ${fmt(Math.min(...f.samples), f)}, max ${fmt(Math.max(...f.samples), f)})` : "";
  // A name too long for the column goes on a line of its own, so the figures stay in one column.
  const name = f.figure.length > NAME_WIDTH ? `${f.figure}\n${" ".repeat(NAME_WIDTH)}` : f.figure.padEnd(NAME_WIDTH);
  console.log(
    `${name} ${fmt(m, f).padStart(10)}${spread.padEnd(34)} n=${f.samples.length}  target ${f.target}  ${verdictOf(f)}`,
  );
}
