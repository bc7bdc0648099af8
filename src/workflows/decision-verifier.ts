/**
 * Loads human-decision signature verification (and with it the curve library) only when a proposal can receive a
 * decision. The SDK evaluates a workflow's modules afresh for every run, so a static import would make every
 * proposal, even one approved by a pattern in its first task, evaluate @noble/curves. The module is in the workflow
 * bundle (webpackMode "eager": no separate chunk); its top-level code runs on the first call. The loaded function
 * lives in a module-level `let`: one per run, never written onto a (frozen) export.
 */
import type { refuseDecisionSignature } from '../identity/decision';

type RefuseDecisionSignature = typeof refuseDecisionSignature;
let loaded: RefuseDecisionSignature | undefined;

/** Loads verification; the proposal workflow awaits it before it opens an escalation. Adds no command to history. */
export async function loadDecisionVerifier(): Promise<RefuseDecisionSignature> {
  loaded ??= (await import(/* webpackMode: "eager" */ '../identity/decision')).refuseDecisionSignature;
  return loaded;
}

/** The loaded verification, or undefined before {@link loadDecisionVerifier} has run in this run. */
export function decisionVerifier(): RefuseDecisionSignature | undefined {
  return loaded;
}
