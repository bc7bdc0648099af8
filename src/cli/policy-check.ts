/**
 * The one-shot commands that act on proposals (`propose`, `clarify`, `decide`) judge nothing themselves, but a person
 * who set `AGENT_JUDGE_POLICY` may think that policy applies: when it is not the one the workflow workers published,
 * they say so on stderr (one line; stdout, which scripts read, is unchanged). Without `AGENT_JUDGE_POLICY` there is
 * nothing to compare and nothing is read.
 */
import type { Client } from '@temporalio/client';
import { loadEnv } from '../config/env';
import { readPolicyInForce } from '../client/policy-in-force';
import { comparePolicies } from '../policy/agreement';
import { loadPolicyLayers } from '../policy/load';
import { describeError } from './io';

export async function warnIfPolicyNotInForce(client: Client, workflowTaskQueue: string): Promise<void> {
  const path = loadEnv().AGENT_JUDGE_POLICY;
  if (!path) return;
  try {
    const { own } = await loadPolicyLayers({ path });
    const agreement = comparePolicies(own, await readPolicyInForce(client, workflowTaskQueue), workflowTaskQueue);
    if (agreement.state !== 'same') process.stderr.write(`agent-judge: ${agreement.message}\n`);
  } catch (err) {
    // The comparison is a courtesy: a policy file that does not load, or a read that fails, is said and ignored.
    process.stderr.write(`${describeError(err)} (AGENT_JUDGE_POLICY: not compared with the workers' policy)\n`);
  }
}
