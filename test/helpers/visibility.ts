/**
 * Waiting for Temporal's visibility, which lags the starts (a few hundred milliseconds on the dev server, more on the
 * cluster, where records travel through history's visibility queue): per-agent limits count with it, so a test that
 * expects a limit to refuse the next proposal first waits until the earlier ones are listed.
 */
import { PROPOSAL_WORKFLOW_TYPE } from '../../src/names';
import type { TestSystem } from './system';

/** Waits until visibility lists at least `n` proposals of `agent` on the system's queue matching `extra`. */
export async function proposalsVisible(sys: TestSystem, agent: string, n: number, extra = ''): Promise<void> {
  const query =
    `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND TaskQueue = '${sys.taskQueues.workflow}' ` +
    `AND AgentId = '${agent}'${extra}`;
  for (let i = 0; i < 300; i++) {
    if ((await sys.client.workflow.count(query)).count >= n) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`visibility never showed ${n} proposals for ${query}`);
}
