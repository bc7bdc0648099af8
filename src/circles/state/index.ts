/** The circle registry's state, one concept per file (see core.ts); the workflow and the client import it here. */
export { RegistryState, type CircleTree, type RegistryDump, type RegistryTree, type TreeNode } from './state';
export type { OperatorInput, PairRecord, RegistryHooks } from './core';
export type { EventsView } from './events';
export type { PairResult, RetireResult } from './membership';
export type { RegistryHandover } from './codec';
