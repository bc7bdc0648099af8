/**
 * The proposal's search attributes, written in batches. They change several times per workflow task (tier, stage,
 * verdict); each upsert is a command, a history event and a visibility write. Changes are collected and written as ONE
 * upsert right before the workflow next blocks (an activity, a wait, the end of the run): `blocking` and the final
 * `flush`. Flush points are fixed places in the code, so the command sequence is the same on replay however the SDK
 * groups jobs into activations.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';

export interface SearchAttributeBatch {
  /** Collects `pairs` for the next write; a later value of a key replaces an earlier one. */
  upsert: (pairs: SearchAttributeUpdatePair[]) => void;
  /** Writes the collected search attributes (one upsert), if any. */
  flush: () => void;
  /** Writes the collected search attributes, then starts what the workflow waits on. */
  blocking: <T>(start: () => Promise<T>) => Promise<T>;
}

/** A batch of pending search attribute changes for one run. */
export function searchAttributeBatch(): SearchAttributeBatch {
  let pending: SearchAttributeUpdatePair[] = [];
  const flush = () => {
    const pairs = pending;
    pending = [];
    if (pairs.length > 0) upsertSearchAttributes(pairs);
  };
  const upsert = (pairs: SearchAttributeUpdatePair[]) => {
    pending = [...pending.filter((p) => !pairs.some((q) => q.key.name === p.key.name)), ...pairs];
  };
  const blocking = <T>(start: () => Promise<T>): Promise<T> => {
    flush();
    return start();
  };
  return { upsert, flush, blocking };
}
