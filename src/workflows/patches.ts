/**
 * Every `patched()` id of the workflows, in one place (samples-typescript `patching-api`): a patch lets histories
 * recorded before a change replay as they ran. Delete one (deprecatePatch, then remove) once no such history is kept.
 */

/** memory_write confined to the agent's own stores in the no-judge and lightweight tiers (issue 21). */
export const MEMORY_STORES = 'memory-stores-confined';
