/**
 * Click-to-workflow-acknowledged latency through the loopback Discord: a proposal escalates, an
 * approver clicks Approve, the real discord.js bot sends the humanDecision Update, the workflow
 * acts, and the bot edits the message. Measured from the INTERACTION_CREATE dispatch to the
 * message edit (the user sees the outcome), and to the first interaction answer (Discord's 3 s).
 *
 * Standalone: `node --import tsx bench/discord.ts` against $TEMPORAL_ADDRESS (default localhost:7233).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { pino } from 'pino';
import { submitProposal } from '../src/client/proposals';
import { startDiscordBot } from '../src/escalation/bot';
import { buttonCustomId } from '../src/escalation/custom-id';
import { createDiscordNotifier } from '../src/escalation/discord-notifier';
import { taskQueuesFor } from '../src/names';
import { defaultPolicyWith } from '../src/policy/load';
import { startWorkersInProcess } from '../src/worker';
import { FAKE_TOKEN, FakeDiscord } from '../test/helpers/fake-discord';
import { printTable, summarize, type Row } from './lib';

export async function benchDiscord(opts: { address: string; namespace: string; clicks?: number }): Promise<Row[]> {
  const clicks = Math.max(50, opts.clicks ?? 60);
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    /* installed by the caller */
  }
  const silent = pino({ level: 'silent' });
  const fake = await FakeDiscord.start();
  const approver = fake.addUser('approver');
  const baseDir = mkdtempSync(join(tmpdir(), 'agent-judge-bench-discord-'));
  const policy = defaultPolicyWith(
    { escalation: { approvers: [`discord:${approver.id}`], timeout: '10m', reminderAt: 0 } },
    { baseDir },
  );
  const taskQueues = taskQueuesFor(`bench-discord-${randomUUID()}`);
  const system = await startWorkersInProcess(opts.address, {
    namespace: opts.namespace,
    taskQueues,
    policy,
    logger: silent,
    notifiers: [createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent })],
    baseDir,
  });
  const { client } = system;
  const bot = await startDiscordBot({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, client, policy, logger: silent });

  const toOutcome: number[] = [];
  const toAnswer: number[] = [];
  let deferred = 0;
  try {
    for (let i = 0; i < clicks + 3; i++) {
      const { workflow_id } = await submitProposal(
        client,
        {
          proposal_id: randomUUID(),
          agent_id: '@bench',
          action_type: 'financial_op',
          target: { account: 'bench' },
          parameters: { amount: i + 1, currency: 'EUR' },
          justification: `bench click ${i} ${randomUUID()}`,
        },
        { taskQueue: taskQueues.workflow },
      );
      const message = await fake.waitFor(() => fake.messagesFor(workflow_id)[0], 30_000, 'the escalation message');
      const click = await fake.click({
        messageId: message.id,
        customId: buttonCustomId('approve', workflow_id),
        userId: approver.id,
      });
      const final = await click.final(30_000);
      const done = performance.now();
      const content = typeof final.body.content === 'string' ? final.body.content : '';
      if (!content.startsWith('✅')) throw new Error(`unexpected outcome: ${JSON.stringify(final.body.content)}`);
      if (i < 3) continue; // warm-up: first bundles, connections, caches
      toAnswer.push(click.latencyMs);
      toOutcome.push(done - click.record.dispatchedAt);
      if (click.callback.type === 6) deferred += 1;
    }
  } finally {
    await bot.stop();
    await system.stop();
    await fake.stop();
    rmSync(baseDir, { recursive: true, force: true });
  }
  return [
    summarize(
      'discord: click -> workflow acknowledged, message edited',
      toOutcome,
      'loopback Discord, real discord.js',
    ),
    summarize(
      'discord: click -> first interaction answer',
      toAnswer,
      `${deferred} of ${toAnswer.length} deferred (3 s limit)`,
    ),
  ];
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await benchDiscord({
    address: process.env.TEMPORAL_ADDRESS ?? 'localhost:7233',
    namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
  });
  printTable('Discord escalation', rows);
}
