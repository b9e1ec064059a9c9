// The stable rule IDs, short form (without the "ai-control-protocol." prefix).
// Kept as a literal so a typo in a check fails to compile; the loader proves this
// list and contract.yaml name exactly the same rules.
export const RULE_IDS = [
  "wire.tcp-stream", "wire.ndjson", "wire.utf8", "wire.line-limit", "wire.request-envelope",
  "wire.response-envelope", "wire.sequential-connection",
  "method.auth", "method.ping", "method.status", "method.observe", "method.events", "method.act",
  "error.parse", "error.invalid-request", "error.method-not-found", "error.invalid-params",
  "error.unauthorized", "error.queue-full",
  "command.type", "command.target-id", "command.item-id", "command.aux-id", "command.x", "command.y",
  "command.screen-x", "command.screen-y", "command.int-arg", "command.string-arg", "command.append",
  "security.disabled-default", "security.loopback-default", "security.remote-token",
  "security.plaintext", "security.secret-input", "security.shipping-build", "security.server-authority",
  "integration.native-extension", "integration.loop-ownership", "integration.observation-schema",
  "integration.command-completion", "integration.mcp-boundary", "integration.bounded-state",
  "validation.finite-timeout", "validation.protocol-smoke", "validation.malformed-peer",
  "validation.security", "validation.project-native", "validation.gameplay-authority",
  "validation.shipping-artifact",
] as const;

export type RuleId = (typeof RULE_IDS)[number];
export type ErrorRuleId = Extract<RuleId, `error.${string}`>;
