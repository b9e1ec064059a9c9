// The names nearest a mistyped one, for "did you mean" in usage errors.

export function suggest(word: string, candidates: readonly string[]): string {
  const near = closest(word, candidates);
  return near.length ? ` (did you mean ${near.join(", ")}?)` : "";
}

/** Up to three candidates nearest a mistyped word, nearest first. */
export function closest(word: string, candidates: readonly string[]): string[] {
  const stem = word
    .replace(/^ai-control-protocol\./, "")
    .replace(/\*/g, "")
    .toLowerCase();
  return candidates
    .map((c) => ({ c, d: c.toLowerCase().includes(stem) && stem.length > 2 ? 0 : distance(stem, c.toLowerCase()) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(stem.length / 3)))
    .sort((a, b) => a.d - b.d)
    .slice(0, 3)
    .map((x) => x.c);
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const keep = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = keep;
    }
  }
  return row[b.length]!;
}
