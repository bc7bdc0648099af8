/**
 * Reading proposals' status for a page of the inbox: a few Queries at a time, each bounded, so a proposal whose
 * workers are gone shows as missing instead of holding the page up.
 */
import type { Client } from '@temporalio/client';
import { getStatus } from '../client/proposals';
import type { ProposalRecord } from '../contracts/status';

/** How long one status Query may take for a page: a proposal whose workers are gone does not hold the page up. */
export const STATUS_QUERY_MS = 5000;

/** At most `limit` promises at once, in order. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const run = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, run));
  return out;
}

/** A proposal's status for a page, or null when it cannot be had within {@link STATUS_QUERY_MS}. */
export async function statusForListing(client: Client, workflowId: string): Promise<ProposalRecord | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolveLate) => (timer = setTimeout(() => resolveLate(null), STATUS_QUERY_MS)));
  try {
    return await Promise.race([getStatus(client, workflowId).catch(() => null), late]);
  } finally {
    clearTimeout(timer);
  }
}
