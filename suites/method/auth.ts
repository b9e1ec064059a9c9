import fc from "fast-check";
import {
  describeNearMiss,
  NEAR_MISS_PADS,
  nearMissParams,
  type TokenNearMiss,
  tokenNearMiss,
} from "../../generators/tokenNearMiss.js";
import type { TranscriptEntry } from "../../protocol/verdict.js";
import {
  type Check,
  type CheckContext,
  describeReply,
  errorCode,
  type Finding,
  fail,
  findingOf,
  pass,
  resultOf,
  rpc,
  skip,
} from "../harness/check.js";
import type { Connection } from "../harness/connection.js";
import { judgedBy, NO_TOKEN } from "../harness/expect.js";
import { plainRejection, plainUnauthorized } from "../harness/plain.js";
import { NEAR_MISS_SHOWN, REDACTED } from "../harness/redact.js";

export const authWrongThenRight: Check = {
  id: "method.auth/wrong-then-right",
  rules: ["method.auth"],
  description: "On one connection: auth with a wrong token, ping, auth with the right token, ping.",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const conn = await ctx.connect();
    const wrong = await ctx.call(conn, rpc("auth", { token: "not-the-token" }, 1));
    if (resultOf(wrong)?.authorized !== false)
      return judgedBy(
        { kind: "result", equals: { authorized: false } },
        fail(
          'A wrong token was not answered {"authorized":false}.',
          `{"result":{"authorized":false}}`,
          describeReply(wrong),
        ),
      );
    const still = await ctx.call(conn, rpc("ping", {}, 2));
    if (errorCode(still) !== ctx.contract.codes["error.unauthorized"])
      return (
        (await plainUnauthorized(ctx)) ??
        judgedBy(
          // At its own ping: the plain form asked meanwhile sent requests after it.
          { kind: "error", codes: [ctx.contract.codes["error.unauthorized"]!], at: 2 },
          fail(
            "After a wrong token the connection was not left unauthorized.",
            `${ctx.contract.codes["error.unauthorized"]} for ping`,
            describeReply(still),
          ),
        )
      );
    const right = await ctx.call(conn, ctx.authRequest(3));
    if (resultOf(right)?.authorized !== true)
      return judgedBy(
        { kind: "result", equals: { authorized: true } },
        fail(
          "The right token after a wrong one did not authorize the connection.",
          `{"result":{"authorized":true}}`,
          describeReply(right),
        ),
      );
    const pong = await ctx.call(conn, rpc("ping", {}, 4));
    if (resultOf(pong)?.ok !== true)
      return judgedBy(
        { kind: "result", equals: { ok: true } },
        fail("After a successful auth, ping was not served.", `{"result":{"ok":true}}`, describeReply(pong)),
      );
    return pass("Wrong token refused, connection left unauthorized, right token then accepted.");
  },
};

export const authSimultaneous: Check = {
  id: "method.auth/per-connection",
  rules: ["method.auth", "error.unauthorized"],
  description:
    "Authorizes one connection and, while it stays open, calls ping on a second one; skipped if the bridge " +
    "serves one connection at a time.",
  note: "a second connection is unauthorized while the first is authorized",
  async run(ctx) {
    if (!ctx.tokenConfigured)
      return skip(
        "no token configured (--token-env): the bridge does not require one, so authorization is not exercised",
      );
    const oneAtATime = () =>
      skip(
        "The bridge serves one connection at a time (the second got no answer while the first was open), " +
          "as the contract allows.",
      );
    if (ctx.concurrentConnections === false) return oneAtATime();
    const first = await ctx.session();
    const second = await ctx.connect({ alongside: true });
    // Where the probe found a second connection served, its answer gets the whole timeout.
    const timeoutMs = ctx.concurrentConnections ? ctx.timeoutMs : Math.min(ctx.timeoutMs, 1000);
    const reply = await ctx.call(second, rpc("ping", {}, "second"), { timeoutMs });
    first.close();
    if (reply.kind === "timeout") return oneAtATime();
    if (errorCode(reply) === ctx.contract.codes["error.unauthorized"])
      return pass("The second connection was unauthorized while the first was authorized.");
    return judgedBy(
      { kind: "error", codes: [ctx.contract.codes["error.unauthorized"]!] },
      fail(
        "A second connection was served without auth while another was authorized.",
        `${ctx.contract.codes["error.unauthorized"]} on the second connection`,
        describeReply(reply),
        ["error.unauthorized"],
      ),
    );
  },
};

/** The near misses every bridge is asked about, before generated ones: the ways a lenient compare goes wrong. */
function everyNearMiss(token: string): TokenNearMiss[] {
  const length = Array.from(token).length;
  return [
    { kind: "prefix", keep: length - 1 },
    { kind: "prefix", keep: Math.floor(length / 2) },
    { kind: "extended", suffix: "x" },
    { kind: "extended", suffix: "\u0000garbage" },
    { kind: "case", change: "upper" },
    { kind: "case", change: "lower" },
    { kind: "case", change: "swap" },
    // Every pad on both sides: a compare that trims one kind of whitespace (a tab, a CR, NBSP) lets it in.
    ...NEAR_MISS_PADS.flatMap((pad) =>
      (["trailing", "leading"] as const).map((where): TokenNearMiss => ({ kind: "padded", where, pad })),
    ),
    { kind: "empty" },
    { kind: "changed", at: length - 1, to: 0 },
    { kind: "changed", at: 0, to: 0 },
    { kind: "wrapped" },
    { kind: "missing" },
  ];
}

export const authNearMiss: Check = {
  id: "method.auth/near-miss",
  rules: ["method.auth", "error.unauthorized"],
  description:
    "On one connection, one near miss of the configured token after another (a prefix, the token extended, in " +
    "another case, with whitespace or NUL around it, empty, one character changed, in an array, missing), " +
    "each followed by a ping; then generated near misses the same way.",
  note:
    "only the exact token authorizes; a refused near miss leaves the connection unauthorized (where the bridge " +
    "closes it instead, the next near miss goes on a new connection)",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const token = ctx.token();
    return ctx.property(
      fc.array(tokenNearMiss(), { minLength: 1, maxLength: 6 }),
      async (misses) => {
        const sent: unknown[] = [];
        const asked: TokenNearMiss[] = [];
        let conn = await ctx.connect();
        let finding: Finding = pass("every near miss refused, and the connection stayed unauthorized");
        try {
          for (const miss of misses) {
            const params = nearMissParams(token, miss);
            if (!params) continue; // this near miss of this token is the token itself
            sent.push(params.token);
            if ("token" in params) asked.push(miss);
            const judged = await judgeNearMiss(ctx, conn, params, describeNearMiss(token, miss));
            if (judged === "closed") conn = await ctx.connect();
            else if (judged) {
              finding = judged;
              break;
            }
          }
        } catch (err) {
          finding = findingOf(err);
        }
        if (finding.verdict === "pass") return finding;
        const hidden = hideNearMisses(finding, conn.transcript.entries(), sent);
        // The near misses, as descriptions: a reproducer applies them to the token it is given.
        return hidden.oracle ? { ...hidden, oracle: { ...hidden.oracle, nearMisses: asked } } : hidden;
      },
      // The listed near misses (each kind at its likeliest slip) as one case, then generated ones for other
      // lengths, positions and suffixes.
      { examples: [everyNearMiss(token)], runs: 1 + Math.ceil(ctx.runs / 10) },
    );
  },
};

/** Why one near miss was not refused, or "closed" where the bridge refused it by closing the connection. */
async function judgeNearMiss(
  ctx: CheckContext,
  conn: Connection,
  params: { token?: unknown },
  what: string,
): Promise<Finding | "closed" | undefined> {
  const codes = ctx.contract.codes;
  const auth = await ctx.call(conn, rpc("auth", params, "near-miss"));
  const answer = resultOf(auth)?.authorized;
  const stringToken = typeof params.token === "string";
  // Refused as a plain bad command is: the code is the bridge's fault, not auth's.
  const code = stringToken ? undefined : await plainRejection(ctx, errorCode(auth), `auth with ${what}`);
  if (code) return code;
  if (answer !== false && (stringToken || errorCode(auth) !== codes["error.invalid-params"]))
    return judgedBy(
      {
        kind: "reply",
        expect: [
          {
            anyOf: [
              [{ path: ["result", "authorized"], equals: false }],
              ...(stringToken ? [] : [[{ path: ["error", "code"], equals: codes["error.invalid-params"] }]]),
            ],
          },
        ],
      },
      fail(
        answer === true ? `auth with ${what} authorized the connection.` : `auth with ${what} was not refused.`,
        stringToken
          ? `{"result":{"authorized":false}}`
          : `{"result":{"authorized":false}} or ${codes["error.invalid-params"]} (not a string token)`,
        describeReply(auth),
        ["method.auth"],
      ),
    );
  const ping = await ctx.call(conn, rpc("ping", {}, "after-near-miss"));
  if (ping.kind === "closed" || ping.kind === "reset") return "closed";
  // Served: a refusal that authorized is auth's fault, unless no connection is kept unauthorized at all.
  if (errorCode(ping) !== codes["error.unauthorized"])
    return (
      (await plainUnauthorized(ctx)) ??
      judgedBy(
        { kind: "error", codes: [codes["error.unauthorized"]!], orClose: true, at: "after-near-miss" },
        fail(
          `After auth refused ${what}, ping on that connection was not rejected with ${codes["error.unauthorized"]}.`,
          `${codes["error.unauthorized"]} (a refused attempt leaves the connection unauthorized)`,
          describeReply(ping),
          ["method.auth"],
        ),
      )
    );
  return undefined;
}

/** Shortest near miss worth hiding where it comes back: shorter ones give little away and would shred ordinary text. */
const HIDDEN_MIN_LENGTH = 4;

/**
 * The harness redacts the token itself, not what is derived from it (a prefix, another case): a
 * finding shows each auth request with its token replaced, and the near misses nowhere else.
 */
function hideNearMisses(finding: Finding, transcript: TranscriptEntry[], sent: unknown[]): Finding {
  const forms = [
    ...new Set(
      sent
        .filter((v): v is string => typeof v === "string" && v.length >= HIDDEN_MIN_LENGTH)
        .flatMap((v) => [JSON.stringify(v).slice(1, -1), v]),
    ),
  ].sort((a, b) => b.length - a.length);
  const scrub = (text: string) => forms.reduce((t, form) => t.split(form).join(NEAR_MISS_SHOWN), text);
  const entry = (e: TranscriptEntry): TranscriptEntry => {
    if (e.text === undefined) {
      if (e.base64 === undefined) return e;
      const { base64: _, ...rest } = e;
      return { ...rest, text: "«bytes not shown: not UTF-8, so not searched for the near misses»" };
    }
    if (e.dir === "send") {
      try {
        const request = JSON.parse(e.text) as { method?: unknown; params?: { token?: unknown } };
        // The token itself (a session's auth) is redacted already, and a reproducer sends it as it is.
        if (
          request.method === "auth" &&
          request.params &&
          "token" in request.params &&
          request.params.token !== REDACTED
        )
          return { ...e, text: `${JSON.stringify({ ...request, params: { token: NEAR_MISS_SHOWN } })}\n` };
      } catch {
        // not one of this check's requests: scrubbed like the rest
      }
    }
    return { ...e, text: scrub(e.text) };
  };
  return {
    ...finding,
    message: scrub(finding.message),
    ...(finding.actual !== undefined ? { actual: scrub(finding.actual) } : {}),
    transcript: transcript.map(entry),
  };
}

export const checks: Check[] = [authWrongThenRight, authSimultaneous, authNearMiss];
