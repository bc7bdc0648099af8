/** Proposals as visibility lists them: by status, start time, audit flag and task queue. */
import type { Client } from '@temporalio/client';
import { listedProposalOf, proposalListQuery, type ListedProposal, type ListOptions } from './list-query';

export type { ListedProposal, ListOptions } from './list-query';

/** Proposals from visibility, newest first; filters by status and start time. */
export async function listProposals(client: Client, options: ListOptions = {}): Promise<ListedProposal[]> {
  const { limit = 1000 } = options;
  const rows: ListedProposal[] = [];
  for await (const wf of client.workflow.list({ query: proposalListQuery(options) })) {
    const attributes = new Map<string, unknown>(
      wf.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]),
    );
    rows.push(
      listedProposalOf({
        workflowId: wf.workflowId,
        startTime: wf.startTime,
        closeTime: wf.closeTime,
        attribute: (name) => attributes.get(name),
        memo: (key) => wf.memo?.[key],
      }),
    );
    if (rows.length >= limit) break;
  }
  return rows;
}
