/** Provenance through a session: which values of a call came from untrusted content (docs/provenance.md). */
export { extractValues, foldText, type FoundValue, type ValueKind } from './values';
export { SessionProvenance, stringLeaves, type ProvenanceSnapshot, type Taint } from './store';
export { describeTaints, isConsequential, isTainted, isUntrustedSource, provenanceFor, sourceName } from './policy';
export { ProvenanceSessions } from './sessions';
