/**
 * `agent-judge/contracts`: the wire shapes (zod schemas and their types), the lifecycle vocabulary and the error
 * family, for actor runtimes that build proposals or read outcomes. Depends on zod only.
 */
export * from './proposal';
export * from './proposal-schema';
export * from './verdict';
export * from './messages';
export * from './policy';
export * from './judge-settings';
export * from './status';
export * from './escalation';
export * from './errors';
export * from './refusal';
export * from './lifecycle';
export * from './identity';
export * from './digest';
export { canonicalJson } from './canonical-json';
