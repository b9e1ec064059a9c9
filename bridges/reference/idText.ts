// The request id as the request wrote it. A JSON number is a decimal of any length (RFC 8259 section 6); read into
// a double it can lose digits (12345678901234567890 becomes 12345678901234567000) or its value (1e400 becomes
// Infinity). A bridge that echoes the id's own text echoes the same number, whatever its size.

const WHITESPACE = " \t\n\r";

/**
 * The JSON text of the top-level member `name` in `text`, the text of a JSON object that already parsed (the last
 * member of that name, as JSON.parse reads it), or undefined where there is none or the text is not such an object.
 */
export function memberJsonText(text: string, name: string): string | undefined {
  const end = text.length;
  let at = 0;
  const skipSpace = () => {
    while (at < end && WHITESPACE.includes(text[at]!)) at++;
  };
  // From an opening quote to just past the closing one.
  const skipString = () => {
    for (at++; at < end && text[at] !== '"'; at++) if (text[at] === "\\") at++;
    at++;
  };
  const skipValue = () => {
    const first = text[at];
    if (first === '"') return skipString();
    if (first === "{" || first === "[") {
      let depth = 0;
      while (at < end) {
        const c = text[at]!;
        if (c === '"') {
          skipString();
          continue;
        }
        if (c === "{" || c === "[") depth++;
        else if (c === "}" || c === "]") depth--;
        at++;
        if (depth === 0) return;
      }
      return;
    }
    // A number or a literal: up to the next delimiter.
    while (at < end && !",}]".includes(text[at]!) && !WHITESPACE.includes(text[at]!)) at++;
  };
  skipSpace();
  if (text[at] !== "{") return undefined;
  at++;
  let found: string | undefined;
  for (;;) {
    skipSpace();
    if (text[at] !== '"') return found;
    const keyStart = at;
    skipString();
    let key: unknown;
    try {
      key = JSON.parse(text.slice(keyStart, at));
    } catch {
      return undefined;
    }
    skipSpace();
    if (text[at] !== ":") return undefined;
    at++;
    skipSpace();
    const valueStart = at;
    skipValue();
    if (key === name) found = text.slice(valueStart, at);
    skipSpace();
    if (text[at] !== ",") return found;
    at++;
  }
}
