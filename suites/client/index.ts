// The catalogue of client mode: the checks the tool runs as a hostile bridge against a client,
// and why the client rules without such a check get no verdict of their own.
import type { RuleId } from "../../protocol/contract.js";
import type { ClientCheck } from "./context.js";
import { checks as finiteTimeout } from "./finite-timeout.js";
import { checks as lineLimit } from "./line-limit.js";
import { checks as loopbackDefault } from "./loopback-default.js";
import { checks as malformedPeer } from "./malformed-peer.js";
import { checks as ndjson } from "./ndjson.js";
import { checks as requestEnvelope } from "./request-envelope.js";
import { checks as responseEnvelope } from "./response-envelope.js";
import { checks as sessions } from "./sessions.js";
import { checks as tcpStream } from "./tcp-stream.js";
import { checks as utf8 } from "./utf8.js";

export { preflight } from "./preflight.js";
export type { ClientCheck };

/** Every client check; the slow ones (waiting out the client's timeout) first, so they overlap the rest. */
export const clientChecks: readonly ClientCheck[] = [
  ...finiteTimeout,
  ...loopbackDefault,
  ...requestEnvelope,
  ...responseEnvelope,
  ...malformedPeer,
  ...lineLimit,
  ...utf8,
  ...ndjson,
  ...tcpStream,
  ...sessions,
];

/** Rules that bind clients but that no case of client mode can observe, with the reason. */
export const UNOBSERVED_CLIENT_DUTIES: Readonly<Record<RuleId, string>> = {
  "security.plaintext": "how a client treats its token and payloads is not visible in the bytes it sends here",
  "security.secret-input":
    "client mode gives the client no token; where it reads one from and whether it prints it " +
    "are its own tests' to prove",
};

export const BRIDGE_DUTY = "a bridge's duty: not judged in client mode";
