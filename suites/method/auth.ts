import { describeNearMiss, nearMissParams, type TokenNearMiss, tokenNearMiss } from "../../generators/tokenNearMiss.js";
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
import { NO_TOKEN } from "../harness/expect.js";

export const authWrongThenRight: Check = {
  id: "method.auth/wrong-then-right",
  rules: ["method.auth"],
  description: "On one connection: auth with a wrong token, ping, auth with the right token, ping.",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const conn = await ctx.connect();
    const wrong = await ctx.call(conn, rpc("auth", { token: "not-the-token" }, 1));
    if (resultOf(wrong)?.authorized !== false)
      return fail(
        'A wrong token was not answered {"authorized":false}.',
        `{"result":{"authorized":false}}`,
        describeReply(wrong),
      );
    const still = await ctx.call(conn, rpc("ping", {}, 2));
    if (errorCode(still) !== ctx.contract.codes["error.unauthorized"])
      return fail(
        "After a wrong token the connection was not left unauthorized.",
        "-32001 for ping",
        describeReply(still),
        ["method.auth", "error.unauthorized"],
      );
    const right = await ctx.call(conn, ctx.authRequest(3));
    if (resultOf(right)?.authorized !== true)
      return fail(
        "The right token after a wrong one did not authorize the connection.",
        `{"result":{"authorized":true}}`,
        describeReply(right),
      );
    const pong = await ctx.call(conn, rpc("ping", {}, 4));
    if (resultOf(pong)?.ok !== true)
      return fail("After a successful auth, ping was not served.", `{"result":{"ok":true}}`, describeReply(pong));
    return pass("Wrong token refused, connection left unauthorized, right token then accepted.");
  },
};

export const authSimultaneous: Check = {
  id: "method.auth/per-connection",
  rules: ["method.auth", "error.unauthorized"],
  description:
    "Authorizes one connection and, while it stays open, calls ping on a second one; skipped if the bridge serves one connection at a time.",
  note: "a second connection is unauthorized while the first is authorized",
  async run(ctx) {
    if (!ctx.tokenConfigured)
      return skip(
        "no token configured (--token-env): the bridge does not require one, so authorization is not exercised",
      );
    const first = await ctx.session();
    const second = await ctx.connect({ alongside: true });
    const reply = await ctx.call(second, rpc("ping", {}, "second"), { timeoutMs: Math.min(ctx.timeoutMs, 1000) });
    first.close();
    if (reply.kind === "timeout")
      return skip(
        "The bridge serves one connection at a time (the second got no answer while the first was open), as the contract allows.",
      );
    if (errorCode(reply) === ctx.contract.codes["error.unauthorized"])
      return pass("The second connection was unauthorized while the first was authorized.");
    return fail(
      "A second connection was served without auth while another was authorized.",
      "-32001 on the second connection",
      describeReply(reply),
      ["error.unauthorized"],
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
    { kind: "padded", where: "trailing", pad: " " },
    { kind: "padded", where: "trailing", pad: "\n" },
    { kind: "padded", where: "leading", pad: " " },
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
    "On a fresh connection each: auth with a near miss of the configured token (a prefix, the token extended, " +
    "in another case, with whitespace or NUL around it, empty, one character changed, in an array, missing), then ping.",
  note: "only the exact token authorizes; a refused near miss leaves the connection unauthorized",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const token = ctx.token();
    const examples = everyNearMiss(token);
    return ctx.property(
      tokenNearMiss(),
      async (miss) => {
        const params = nearMissParams(token, miss);
        if (!params) return pass("not applicable: this near miss of the token is the token itself");
        const conn = await ctx.connect();
        let finding: Finding;
        try {
          finding = await judgeNearMiss(ctx, conn, params, describeNearMiss(token, miss));
        } catch (err) {
          finding = findingOf(err);
        }
        return finding.verdict === "pass" ? finding : hideNearMiss(finding, conn.transcript, params.token);
      },
      // Every listed near miss, and as many generated ones as the profile asks for on top.
      { examples, runs: examples.length + ctx.runs },
    );
  },
};

async function judgeNearMiss(
  ctx: CheckContext,
  conn: Connection,
  params: { token?: unknown },
  what: string,
): Promise<Finding> {
  const codes = ctx.contract.codes;
  const auth = await ctx.call(conn, rpc("auth", params, "near-miss"));
  const answer = resultOf(auth)?.authorized;
  const stringToken = typeof params.token === "string";
  if (answer !== false && (stringToken || errorCode(auth) !== codes["error.invalid-params"]))
    return fail(
      answer === true ? `auth with ${what} authorized the connection.` : `auth with ${what} was not refused.`,
      stringToken
        ? `{"result":{"authorized":false}}`
        : `{"result":{"authorized":false}} or ${codes["error.invalid-params"]} (not a string token)`,
      describeReply(auth),
      ["method.auth"],
    );
  const ping = await ctx.call(conn, rpc("ping", {}, "after-near-miss"));
  if (errorCode(ping) !== codes["error.unauthorized"])
    return fail(
      `After auth refused ${what}, ping on that connection was not rejected with ${codes["error.unauthorized"]}.`,
      `${codes["error.unauthorized"]} (a refused attempt leaves the connection unauthorized)`,
      describeReply(ping),
      ["method.auth", "error.unauthorized"],
    );
  return pass("refused, and the connection stayed unauthorized");
}

/** Shortest near miss worth hiding where it comes back: shorter ones give little away and would shred ordinary text. */
const HIDDEN_MIN_LENGTH = 4;
const NEAR_MISS_SHOWN = "«near miss of the token»";

/**
 * The harness redacts the token itself, not what is derived from it (a prefix, another case): a
 * finding shows the auth request with its token replaced, and the near miss nowhere else.
 */
function hideNearMiss(finding: Finding, transcript: TranscriptEntry[], sent: unknown): Finding {
  const forms =
    typeof sent === "string" && sent.length >= HIDDEN_MIN_LENGTH
      ? [...new Set([JSON.stringify(sent).slice(1, -1), sent])].sort((a, b) => b.length - a.length)
      : [];
  const scrub = (text: string) => forms.reduce((t, form) => t.split(form).join(NEAR_MISS_SHOWN), text);
  const entry = (e: TranscriptEntry): TranscriptEntry => {
    if (e.text === undefined) {
      if (e.base64 === undefined) return e;
      const { base64: _, ...rest } = e;
      return { ...rest, text: "«bytes not shown: not UTF-8, so not searched for the near miss»" };
    }
    if (e.dir === "send") {
      try {
        const request = JSON.parse(e.text) as { method?: unknown; params?: { token?: unknown } };
        if (request.method === "auth" && request.params && "token" in request.params)
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
