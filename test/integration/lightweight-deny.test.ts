import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitAndWait } from '../../src/client/proposals';
import { defaultPolicyWith } from '../../src/policy/load';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

let sys: TestSystem;
beforeAll(async () => {
  const { lightweight } = defaultPolicyWith().spec;
  sys = await startSystem({
    spec: {
      lightweight: {
        ...lightweight,
        deny: [...lightweight.deny, { name: 'secret', pattern: 'hunter2', field: 'parameters' }],
      },
    },
  });
});
afterAll(async () => sys?.stop());

describe('lightweight deny rule on a field that names an object', () => {
  it('rejects a vault note whose parameters hide the secret, naming the rule and the leaf', async () => {
    const p = proposal('vault_note_create', { parameters: { title: 'standup', content: 'wifi: hunter2' } });
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('rejected');
    expect(out.verdict).toMatchObject({
      verdict: 'REJECT',
      decided_by: 'rules',
      rule: 'secret',
      reason: 'parameters.content matches deny rule secret',
    });
  });
});
