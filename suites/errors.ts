import fc from "fast-check";
import { nonStandardJson } from "../generators/nonStandardJson.js";
import { unknownMethod } from "../generators/unknownMethod.js";
import { unauthorizedCall } from "../generators/unauthorizedCall.js";
import { describeReply, errorCode, expectError, fail, pass, resultOf, rpc, skip, Violation, warn, type Check, type Reply } from "./check.js";

const NO_TOKEN = "no token configured (--token-env): the bridge does not require one, so authorization is not exercised";

export const nonJson: Check = {
  id: "error.parse/non-json",
  rules: ["error.parse"],
  description: "Sends lines of valid UTF-8 that RFC 8259 rejects: NaN and Infinity, comments, trailing commas, single quotes, bad numbers, raw control characters, bad escapes, a BOM, truncated documents, trailing garbage, unquoted keys, bad literals.",
  requirement: "Reject malformed JSON with -32700 (id null). [Answering by closing the connection, or ignoring a BOM as RFC 8259 allows, is tolerated.]",
  run: (ctx) =>
    ctx.property(nonStandardJson(), async ({ kind, text }) => {
      const conn = await ctx.session();
      // A lenient parser may read the template's id 1; that is judged below as accepting non-JSON.
      let reply: Reply;
      try {
        reply = await ctx.call(conn, text, { expectId: 1, orNullId: true });
      } catch (err) {
        // Answering non-JSON with a broken reply (e.g. echoing NaN) fails both rules.
        if (err instanceof Violation) return fail(`Malformed JSON (${kind}) was not rejected, and the reply broke ${err.rule}: ${err.message}`, "-32700 (id null)", err.actual, ["error.parse", err.rule]);
        throw err;
      }
      if (errorCode(reply) === ctx.contract.codes["error.parse"]) return pass("rejected");
      if (reply.kind === "closed" || reply.kind === "reset") return warn(`Malformed JSON (${kind}) was answered by closing the connection.`, "-32700 (id null)", describeReply(reply));
      if (kind === "bom" && resultOf(reply)) return warn("A line starting with a byte order mark was accepted (RFC 8259 lets parsers ignore it).", "-32700 (id null)", describeReply(reply));
      return fail(`Malformed JSON (${kind}) was not rejected with a parse error.`, "-32700 (id null)", describeReply(reply));
    }, { liveness: true }),
};

export const unknownMethods: Check = {
  id: "error.method-not-found/unknown-method",
  rules: ["error.method-not-found"],
  description: "Calls methods the contract does not define: near misses of real names, other cases, Unicode names.",
  requirement: "Reject an unknown protocol method with -32601.",
  run: (ctx) =>
    ctx.property(unknownMethod({ known: ctx.contract.methods }), (method) =>
      expectError(ctx, rpc(method, {}, 1), "error.method-not-found", `The unknown method ${JSON.stringify(method)}`)),
};

export const actWithoutType: Check = {
  id: "error.invalid-params/act-type",
  rules: ["error.invalid-params", "command.type"],
  description: "Calls act with the command type missing, empty, or not a string.",
  requirement: "Reject missing command type or structurally invalid method parameters with -32602; type is a required non-empty string.",
  run: (ctx) =>
    ctx.property(
      fc.oneof(fc.constant({}), fc.constantFrom<unknown>("", 0, 1, true, null, [], ["move"], {}).map((type) => ({ type })), fc.record({ x: fc.integer(), stringArg: fc.string() })),
      (params) => expectError(ctx, rpc("act", params as Record<string, unknown>, 1), "error.invalid-params", `act with params ${JSON.stringify(params)}`),
    ),
};

export const eventsIllTyped: Check = {
  id: "error.invalid-params/events-cursor",
  rules: ["error.invalid-params", "method.events"],
  description: "Calls events with afterSeq or limit that are not integers: strings, fractions, booleans, arrays, objects.",
  requirement: "Reject structurally invalid method parameters with -32602; events takes {afterSeq?: integer, limit?: integer}.",
  run: (ctx) =>
    ctx.property(
      fc.record({ key: fc.constantFrom("afterSeq", "limit"), value: fc.constantFrom<unknown>("1", "", 1.5, -0.5, true, false, [], [1], {}, { n: 1 }, 1e300) }),
      ({ key, value }) => expectError(ctx, rpc("events", { [key]: value }, 1), "error.invalid-params", `events with ${key}=${JSON.stringify(value)}`),
    ),
};

export const beforeAuth: Check = {
  id: "error.unauthorized/before-auth",
  rules: ["error.unauthorized", "method.auth"],
  description: "Before authorizing, calls every method but auth (and unknown ones): on a fresh connection, after a wrong token of any shape, and after another connection was authorized.",
  requirement: "Reject every method except auth until the connection is authorized when a token is configured (-32001); a failed attempt leaves it unauthorized; authorization never carries over to another connection.",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    return ctx.property(unauthorizedCall(), async (call) => {
      if (call.afterReconnect) (await ctx.session()).close();
      const conn = await ctx.connect();
      if (call.wrongToken !== undefined) {
        const auth = await ctx.call(conn, rpc("auth", { token: call.wrongToken }, "wrong"));
        const answer = resultOf(auth)?.authorized;
        const rejected = answer === false || (typeof call.wrongToken !== "string" && errorCode(auth) === ctx.contract.codes["error.invalid-params"]);
        if (!rejected) return fail(`auth with a wrong token ${JSON.stringify(call.wrongToken)} was not answered {"authorized":false}.`, `{"authorized":false} (or -32602 for a non-string token)`, describeReply(auth), ["method.auth"]);
      }
      const reply = await ctx.call(conn, rpc(call.method, call.params, 1));
      if (errorCode(reply) === ctx.contract.codes["error.unauthorized"]) return pass("rejected");
      const known = ctx.contract.methods.includes(call.method);
      if (!known && errorCode(reply) === ctx.contract.codes["error.method-not-found"]) {
        return warn(`The unknown method ${call.method} before auth got -32601 rather than -32001 (the contract does not say which comes first).`, "-32001", describeReply(reply));
      }
      const where = call.afterReconnect ? "on a new connection after another was authorized" : call.wrongToken !== undefined ? "after a wrong token" : "before auth";
      return fail(`${call.method} ${where} was not rejected with -32001.`, "-32001", describeReply(reply), ["error.unauthorized"]);
    });
  },
};

export const authWrongThenRight: Check = {
  id: "method.auth/wrong-then-right",
  rules: ["method.auth"],
  description: "On one connection: auth with a wrong token, ping, auth with the right token, ping.",
  requirement: "Authenticate the current connection with the configured shared token; a failed attempt leaves it unauthorized and a later attempt may succeed. Result {authorized: boolean}.",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const conn = await ctx.connect();
    const wrong = await ctx.call(conn, rpc("auth", { token: "not-the-token" }, 1));
    if (resultOf(wrong)?.authorized !== false) return fail("A wrong token was not answered {\"authorized\":false}.", `{"result":{"authorized":false}}`, describeReply(wrong));
    const still = await ctx.call(conn, rpc("ping", {}, 2));
    if (errorCode(still) !== ctx.contract.codes["error.unauthorized"]) return fail("After a wrong token the connection was not left unauthorized.", "-32001 for ping", describeReply(still), ["method.auth", "error.unauthorized"]);
    const right = await ctx.call(conn, ctx.authRequest(3));
    if (resultOf(right)?.authorized !== true) return fail("The right token after a wrong one did not authorize the connection.", `{"result":{"authorized":true}}`, describeReply(right));
    const pong = await ctx.call(conn, rpc("ping", {}, 4));
    if (resultOf(pong)?.ok !== true) return fail("After a successful auth, ping was not served.", `{"result":{"ok":true}}`, describeReply(pong));
    return pass("Wrong token refused, connection left unauthorized, right token then accepted.");
  },
};

export const precedence: Check = {
  id: "error.unauthorized/precedence",
  rules: ["error.unauthorized", "error.invalid-request"],
  description: "Before auth, sends an invalid envelope and an unknown method, where two errors could apply.",
  requirement: "Where faults coincide: an invalid envelope is an invalid request (-32600) whoever sends it; every method except auth is unauthorized (-32001) before auth. Where the contract is silent, another order is a warning.",
  async run(ctx) {
    if (!ctx.tokenConfigured) return skip(NO_TOKEN);
    const conn = await ctx.connect();
    const envelope = await ctx.call(conn, { jsonrpc: "1.0", id: 1, method: "ping", params: {} }, { orNullId: true });
    const unknown = await ctx.call(conn, rpc("no.such.method", {}, 2));
    const codes = ctx.contract.codes;
    if (errorCode(envelope) !== codes["error.invalid-request"] && errorCode(envelope) !== codes["error.unauthorized"]) {
      return fail("An invalid envelope before auth got neither -32600 nor -32001.", "-32600", describeReply(envelope), ["error.invalid-request"]);
    }
    if (errorCode(unknown) !== codes["error.unauthorized"] && errorCode(unknown) !== codes["error.method-not-found"]) {
      return fail("An unknown method before auth got neither -32001 nor -32601.", "-32001", describeReply(unknown), ["error.unauthorized"]);
    }
    if (errorCode(envelope) !== codes["error.invalid-request"]) return warn("An invalid envelope before auth got -32001 rather than -32600.", "-32600", describeReply(envelope));
    if (errorCode(unknown) !== codes["error.unauthorized"]) return warn("An unknown method before auth got -32601 rather than -32001.", "-32001", describeReply(unknown));
    return pass("Invalid envelope -> -32600 and unknown method -> -32001 before auth.");
  },
};

export const errorChecks: Check[] = [nonJson, unknownMethods, actWithoutType, eventsIllTyped, beforeAuth, authWrongThenRight, precedence];
