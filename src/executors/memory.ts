import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { proposalFor, type Executor } from './types';

/** memory_write: appends one JSON line to the agent memory store `<memory.dir>/<store>.jsonl`. */
export const memoryExecutor: Executor = {
  name: 'memory',
  async run(ctx) {
    const { target, parameters } = proposalFor(ctx, 'memory_write');
    const dir = ctx.policy.spec.memory.dir;
    await mkdir(dir, { recursive: true });
    const file = join(dir, `${target.store}.jsonl`);
    const line = {
      at: new Date().toISOString(),
      agent_id: ctx.proposal.agent_id,
      proposal_id: ctx.proposal.proposal_id,
      workflow_id: ctx.workflowId,
      content: parameters.content,
    };
    await appendFile(file, `${JSON.stringify(line)}\n`, 'utf8');
    return { ok: true, output: { store: target.store, file, bytes: Buffer.byteLength(parameters.content) } };
  },
};
