import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DESCRIPTOR_PATH, statusRpcDescriptor } from '../../scripts/status-rpc-descriptor';
import { clarifyUpdate, humanDecisionUpdate, awaitSettledUpdate, SA, statusQuery } from '../../src/names';
import { PROPOSAL_ID_SEARCH_ATTRIBUTE, PROPOSAL_MESSAGE_NAMES } from '../../src/wire-names';
import { ENV_VARS } from '../../src/config/env';
import { REFUSABLE_ENV_VARS, temporalTargetLazily } from '../../src/client/target';
import { BadInputError } from '../../src/contracts/errors';

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

  it('checks the environment only when a variable the schema can refuse is set, then as others do', async () => {
    // A schema that takes any text accepts these probes; one that refuses some value refuses at least one of them.
    const probes = ['\u0000 not a value', 'x'.repeat(5000), '-1'];
    const refusable = Object.entries(ENV_VARS)
      .filter(([, v]) => probes.some((probe) => !v.schema.safeParse(probe).success))
      .map(([name]) => name);
    expect([...REFUSABLE_ENV_VARS].sort()).toEqual(refusable.sort());

    await expect(temporalTargetLazily({}, { TEMPORAL_ADDRESS: 'no-port' })).rejects.toThrow(BadInputError);
    await expect(temporalTargetLazily({}, { LOG_LEVEL: 'loud' })).rejects.toThrow(/LOG_LEVEL="loud"/);
    const target = await temporalTargetLazily({ namespace: 'ns' }, { TEMPORAL_ADDRESS: 'temporal.example:7233' });
    expect(target).toMatchObject({ address: 'temporal.example:7233', namespace: 'ns' });
    expect(target.attempts).toBeUndefined();
    expect(await temporalTargetLazily({}, { AGENT_JUDGE_TEMPORAL_ATTEMPTS: '3' })).toMatchObject({ attempts: 3 });
    await expect(temporalTargetLazily({}, { AGENT_JUDGE_TEMPORAL_ATTEMPTS: '0' })).rejects.toThrow(
      /AGENT_JUDGE_TEMPORAL_ATTEMPTS="0"/,
    );
  });
});
