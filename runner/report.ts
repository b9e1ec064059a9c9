import type { Level, Observed } from "../protocol/contract.js";
import type { TranscriptEntry } from "./connection.js";
import type { Verdict } from "../suites/check.js";

/** JSON report, schemaVersion 1 (DESIGN.md): scripts depend on its shape, so only ever add to it. */
export interface Report {
  schemaVersion: 1;
  tool: { name: string; version: string };
  target: { endpoint: string; spawned: boolean; label?: string };
  seed: number;
  startedAt: string;
  durationMs: number;
  /** Rules per verdict. */
  summary: Record<Verdict, number>;
  /** With --baseline: known failures that did not fail the run, and entries that now pass. */
  baseline?: { file: string; known: { id: string; reason: string }[]; stale: { id: string; reason: string }[] };
  rules: RuleReport[];
}

export interface RuleReport {
  id: string;
  title: string;
  verdict: Verdict;
  group: string;
  level: Level;
  observed: Observed;
  requirement: string;
  /** Why the rule has no check result (skipped rules). */
  reason?: string;
  checks: CheckReport[];
}

export interface CheckReport {
  id: string;
  verdict: Verdict;
  message: string;
  expected?: string;
  actual?: string;
  description?: string;
  requirement?: string;
  durationMs?: number;
  counterexample?: string;
  seed?: number;
  path?: string;
  /** A command line that re-runs exactly this case. */
  replay?: string;
  transcript?: TranscriptEntry[];
}

export const TOOL = { name: "aicontrol-conformance", version: "0.1.0" };
