import {
  UNAUTHORIZED_OTHER_METHODS,
  UNAUTHORIZED_PARAMS,
  type UnauthorizedCall,
  unauthorizedCall,
} from "../../generators/unauthorizedCall.js";
import { type Check, describeReply, errorCode, fail, pass, resultOf, rpc, skip, warn } from "../harness/check.js";
import { classesFirst, cover } from "../harness/classes.js";
import { judgedBy, NO_TOKEN } from "../harness/expect.js";
import { plainRejection } from "../harness/plain.js";

/** Every method, an unknown one and a near miss of auth, each in every situation at least once (two rounds). */
const METHOD_CLASSES = ["ping", "status", "observe", "events", "act", "no.such.method", ...UNAUTHORIZED_OTHER_METHODS];
const SITUATIONS: Omit<UnauthorizedCall, "method" | "params">[] = [
  { afterReconnect: false },
  { afterReconnect: false, wrongToken: "" },
  { afterReconnect: true },
  { afterReconnect: false, wrongToken: "wrong-token" },
  { afterReconnect: false, wrongToken: 1 },
  { afterReconnect: true, wrongToken: null },
];
const CALL_CLASSES: UnauthorizedCall[] = cover(METHOD_CLASSES, SITUATIONS, 2 * METHOD_CLASSES.length).map(
  // Every params value the generator draws is met too (act keeps its type, so only authorization is missing).
  ([method, situation], i) => ({
    method,
    params: method === "act" ? { type: "echo" } : UNAUTHORIZED_PARAMS[i % UNAUTHORIZED_PARAMS.length]!,
    ...situation,
  }),
);

export const beforeAuth: Check = {
  id: "error.unauthorized/before-auth",
  rules: ["error.unauthorized", "method.auth"],
  description:
    "Before authorizing, calls every method but auth (and unknown ones): on a fresh connection, after a wrong " +
    "token of any shape, and after another connection was authorized.",
  note: "a failed attempt leaves the connection unauthorized; authorization never carries over to another connection",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const codes = ctx.contract.codes;
    const unauthorized = codes["error.unauthorized"];
    return ctx.property(
      unauthorizedCall(),
      async (call) => {
        if (call.afterReconnect) (await ctx.session()).close();
        const conn = await ctx.connect();
        if (call.wrongToken !== undefined) {
          const auth = await ctx.call(conn, rpc("auth", { token: call.wrongToken }, "wrong"));
          const answer = resultOf(auth)?.authorized;
          const rejected =
            answer === false ||
            (typeof call.wrongToken !== "string" && errorCode(auth) === codes["error.invalid-params"]);
          // Refused as a plain bad command is: the code is the bridge's fault, not auth's.
          const code =
            rejected || typeof call.wrongToken === "string"
              ? undefined
              : await plainRejection(ctx, errorCode(auth), `auth with token ${JSON.stringify(call.wrongToken)}`);
          if (code) return code;
          if (!rejected)
            return judgedBy(
              {
                kind: "reply",
                expect: [
                  {
                    anyOf: [
                      [{ path: ["result", "authorized"], equals: false }],
                      ...(typeof call.wrongToken === "string"
                        ? []
                        : [[{ path: ["error", "code"], equals: codes["error.invalid-params"] }]]),
                    ],
                  },
                ],
              },
              fail(
                `auth with a wrong token ${JSON.stringify(call.wrongToken)} was not answered {"authorized":false}.`,
                `{"authorized":false} (or ${codes["error.invalid-params"]} for a non-string token)`,
                describeReply(auth),
                ["method.auth"],
              ),
            );
        }
        const reply = await ctx.call(conn, rpc(call.method, call.params, 1));
        if (errorCode(reply) === unauthorized) return pass("rejected");
        // No reply at all: is any new connection served? Where one's auth goes unanswered too, that is the cause.
        if (reply.kind !== "response") (await ctx.session()).close();
        const where = call.afterReconnect
          ? "on a new connection after another was authorized"
          : call.wrongToken !== undefined
            ? "after a wrong token"
            : "before auth";
        // The contract rejects every method but auth until the connection is authorized: unknown ones included.
        const unknown = ctx.contract.methods.includes(call.method) ? "" : " (an unknown method is still a method)";
        return judgedBy(
          // The call judged, not the auth that asked whether a new connection is served.
          { kind: "error", codes: [unauthorized!], at: 1 },
          fail(
            `${call.method} ${where} was not rejected with ${unauthorized}${unknown}.`,
            String(unauthorized),
            describeReply(reply),
            ["error.unauthorized"],
          ),
        );
      },
      classesFirst(CALL_CLASSES, ctx.runs - CALL_CLASSES.length),
    );
  },
};

export const precedence: Check = {
  id: "error.unauthorized/precedence",
  rules: ["error.unauthorized", "error.invalid-request"],
  description: "Before auth, sends an invalid envelope and an unknown method, where two errors could apply.",
  note:
    "an invalid envelope is an invalid request whoever sends it (unauthorized for it is a warning); an unknown " +
    "method is a method, and every method but auth is rejected as unauthorized until the connection is authorized",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const conn = await ctx.connect();
    const envelope = await ctx.call(conn, { jsonrpc: "1.0", id: 1, method: "ping", params: {} }, { orNullId: true });
    const unknown = await ctx.call(conn, rpc("no.such.method", {}, 2));
    const codes = ctx.contract.codes;
    const [invalid, unauthorized, notFound] = [
      codes["error.invalid-request"],
      codes["error.unauthorized"],
      codes["error.method-not-found"],
    ];
    if (errorCode(envelope) !== codes["error.invalid-request"] && errorCode(envelope) !== codes["error.unauthorized"]) {
      return judgedBy(
        { kind: "error", codes: [invalid!, unauthorized!], at: 1 },
        fail(
          `An invalid envelope before auth got neither ${invalid} nor ${unauthorized}.`,
          String(invalid),
          describeReply(envelope),
          ["error.invalid-request"],
        ),
      );
    }
    if (errorCode(unknown) !== unauthorized) {
      return judgedBy(
        { kind: "error", codes: [unauthorized!] },
        fail(
          `An unknown method before auth was not rejected with ${unauthorized}` +
            `${errorCode(unknown) === notFound ? ` but with ${notFound}` : ""}: the contract rejects every method but ` +
            "auth until the connection is authorized, unknown ones included.",
          String(unauthorized),
          describeReply(unknown),
          ["error.unauthorized"],
        ),
      );
    }
    if (errorCode(envelope) !== codes["error.invalid-request"])
      return warn(
        `An invalid envelope before auth got ${unauthorized} rather than ${invalid}.`,
        String(invalid),
        describeReply(envelope),
      );
    return pass(`Invalid envelope -> ${invalid} and unknown method -> ${unauthorized} before auth.`);
  },
};

export const afterReconnect: Check = {
  id: "error.unauthorized/after-reconnect",
  rules: ["error.unauthorized", "method.auth"],
  description:
    "Authorizes a connection and closes it, then pings on a new one; authorizes that one, closes it straight " +
    "after auth, and calls status on a third. The connections are one after another, never two at once.",
  note: "authorization ends with its connection: not kept for the client's address, nor for the next connection",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const unauthorized = ctx.contract.codes["error.unauthorized"];
    const first = await ctx.session();
    const pong = await ctx.call(first, rpc("ping", {}, "authorized"));
    if (resultOf(pong)?.ok !== true)
      return judgedBy(
        { kind: "result", equals: { ok: true } },
        fail("An authorized connection was not served ping.", `{"result":{"ok":true}}`, describeReply(pong), [
          "method.auth",
        ]),
      );
    first.close();
    const second = await ctx.connect();
    const ping = await ctx.call(second, rpc("ping", {}, "after-reconnect"));
    if (errorCode(ping) !== unauthorized)
      return judgedBy(
        { kind: "error", codes: [unauthorized!] },
        fail(
          "A new connection, opened after an authorized one closed, was not rejected before auth.",
          `${unauthorized} for ping`,
          describeReply(ping),
          ["error.unauthorized"],
        ),
      );
    const auth = await ctx.call(second, ctx.authRequest("auth-second"));
    if (resultOf(auth)?.authorized !== true)
      return judgedBy(
        { kind: "result", equals: { authorized: true } },
        fail(
          "The right token did not authorize a connection opened after another one closed.",
          `{"result":{"authorized":true}}`,
          describeReply(auth),
          ["method.auth"],
        ),
      );
    second.close();
    const third = await ctx.connect();
    const status = await ctx.call(third, rpc("status", {}, "after-second-reconnect"));
    if (errorCode(status) !== unauthorized)
      return judgedBy(
        { kind: "error", codes: [unauthorized!] },
        fail(
          "A new connection, opened after one closed straight after its auth, was not rejected before auth.",
          `${unauthorized} for status`,
          describeReply(status),
          ["error.unauthorized"],
        ),
      );
    return pass("Each connection after an authorized one started unauthorized.");
  },
};

export const checks: Check[] = [beforeAuth, precedence, afterReconnect];
