// The exit codes of the tool and of the reproducers it exports, for --help and the README alike.

/** The tool's exit codes. */
export const EXIT_CODES: readonly (readonly [number, string])[] = [
  [0, "no rule failed"],
  [1, "a rule failed or could not be judged (with --compare: a rule got worse)"],
  [2, "bad usage, configuration or an unwritable output (checked before connecting)"],
  [3, "the target could not be reached or started"],
  [130, "interrupted (the report of what ran is still written)"],
];

/** The exit codes of a reproducer that --export writes. */
export const REPRODUCER_EXIT: readonly (readonly [number, string])[] = [
  [0, "the bridge now behaves"],
  [1, "it still breaks the rule"],
  [2, "the token is missing or refused, or the replay never reached the case's state (COULD NOT REPLAY)"],
  [3, "a check without a machine oracle got another reply than recorded"],
  [4, "nothing listens"],
];

/** "0 x, 1 y, ...": a table of exit codes as one phrase. */
export const exitList = (table: readonly (readonly [number, string])[]) =>
  table.map(([code, meaning]) => `${code}: ${meaning}`).join("; ");
