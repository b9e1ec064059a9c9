import fc from "fast-check";

export interface UnauthorizedCallConstraints {
  /** Methods that need authorization. Default: every AiControl method but auth. */
  methods?: string[];
}

export interface UnauthorizedCall {
  method: string;
  params: Record<string, unknown>;
  /** A wrong auth attempt made first on the same connection, if any. */
  wrongToken?: unknown;
  /** Authorize one connection first, then make the call on a new one. */
  afterReconnect: boolean;
}

/** The params a call carries (each before authorization, where no method may read them). */
export const UNAUTHORIZED_PARAMS: readonly Record<string, unknown>[] = [
  {},
  { type: "echo" },
  { afterSeq: 0, limit: 1 },
];
/** Names no method has, beside the real ones: what a dispatch that checks authorization per method misses. */
export const UNAUTHORIZED_OTHER_METHODS: readonly string[] = ["shutdown", "admin", "Auth"];

/** Calls made before a connection is authorized: every method and unknown ones, after wrong tokens or a reconnect. */
export function unauthorizedCall(constraints: UnauthorizedCallConstraints = {}): fc.Arbitrary<UnauthorizedCall> {
  const { methods = ["ping", "status", "observe", "events", "act"] } = constraints;
  const params = fc.constantFrom(...UNAUTHORIZED_PARAMS);
  const wrongToken = fc.option(
    fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constant(""),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.array(fc.string(), { maxLength: 2 }),
    ),
    { nil: undefined },
  );
  return fc.record(
    {
      method: fc.oneof(
        { weight: 5, arbitrary: fc.constantFrom(...methods) },
        { weight: 1, arbitrary: fc.constantFrom(...UNAUTHORIZED_OTHER_METHODS) },
      ),
      params,
      wrongToken,
      afterReconnect: fc.boolean(),
    },
    { requiredKeys: ["method", "params", "afterReconnect"] },
  );
}
