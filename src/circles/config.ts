/** Tunables of the circle registry. Carried through continue-as-new; tests shrink them. */
export interface RegistryConfig {
  /** A KNOCK (or bridge message) is fresh while |registry time - signed time| <= this. */
  knockWindowMs: number;
  /** A membership statement is accepted this long after the parent signed it. */
  statementWindowMs: number;
  /** Live nonces one caller may hold (KNOCKs per 2 x window); beyond it KNOCKs are rate-limited. */
  maxKnocksPerCallerWindow: number;
  /**
   * Operator nonces held (each for twice the signature window): bounds the registry's memory and
   * handover; beyond it operator actions are refused as rate-limited until older ones expire.
   */
  maxOperatorNoncesHeld: number;
  /** Governance events held in full; older ones leave only their exact counts behind. */
  maxEventsHeld: number;
  /** Cross-circle requests held; finished ones are dropped first. */
  maxBridgeHeld: number;
  /** Continue as new after this many Updates in one run (the server refuses more than 2,000). */
  maxUpdatesPerRun: number;
  /** Continue as new once the run's history has this many events (the server warns at 10,240). */
  maxHistoryEvents: number;
  /** Budget for the continue-as-new payload (the server's limit is 2 MB). */
  maxHandoverBytes: number;
  /** Organisation of top-level agents registered without one. */
  defaultOrg: string;
}

export const DEFAULT_REGISTRY_CONFIG: RegistryConfig = {
  knockWindowMs: 30_000,
  statementWindowMs: 300_000,
  maxKnocksPerCallerWindow: 2_000,
  maxOperatorNoncesHeld: 5_000,
  maxEventsHeld: 500,
  maxBridgeHeld: 100,
  maxUpdatesPerRun: 1_000,
  maxHistoryEvents: 8_000,
  maxHandoverBytes: 1_800_000,
  defaultOrg: 'default',
};

export function registryConfig(partial: Partial<RegistryConfig> = {}): RegistryConfig {
  return { ...DEFAULT_REGISTRY_CONFIG, ...partial };
}
