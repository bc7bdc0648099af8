import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DESCRIPTOR_PATH, statusRpcDescriptor } from '../../scripts/status-rpc-descriptor';
import { clarifyUpdate, humanDecisionUpdate, awaitSettledUpdate, SA, statusQuery } from '../../src/names';
import { PROPOSAL_ID_SEARCH_ATTRIBUTE, PROPOSAL_MESSAGE_NAMES } from '../../src/wire-names';

describe('the status path without the SDK client', () => {
  it('speaks the installed Temporal API: its descriptor is the one cut from @temporalio/proto', () => {
    // Stale after an SDK upgrade: `node --import tsx scripts/status-rpc-descriptor.ts` writes the new one.
    const committed: unknown = JSON.parse(readFileSync(DESCRIPTOR_PATH, 'utf8'));
    expect(committed).toEqual(statusRpcDescriptor());
  });

  it('uses the very names the SDK definitions carry', () => {
    expect(statusQuery.name).toBe(PROPOSAL_MESSAGE_NAMES.status);
    expect(clarifyUpdate.name).toBe(PROPOSAL_MESSAGE_NAMES.clarify);
    expect(humanDecisionUpdate.name).toBe(PROPOSAL_MESSAGE_NAMES.humanDecision);
    expect(awaitSettledUpdate.name).toBe(PROPOSAL_MESSAGE_NAMES.awaitSettled);
    expect(SA.ProposalId.name).toBe(PROPOSAL_ID_SEARCH_ATTRIBUTE);
  });
});
