/** `agent-judge discord` and the helper `agent-judge dev` uses, against the loopback Discord. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Command } from 'commander';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { registerDiscordCommand, startDiscordBotFromEnv } from '../../src/cli/discord';
import { buttonCustomId } from '../../src/escalation/custom-id';
import { createDiscordNotifier, type DiscordAnnouncementRef } from '../../src/escalation/discord-notifier';
import { BadInputError } from '../../src/contracts/errors';
import { FAKE_TOKEN, FakeDiscord } from '../helpers/fake-discord';
import { sampleNotice } from '../helpers/escalation-notice';

function program(): Command {
  const p = new Command('agent-judge').option('--address <host:port>').option('--namespace <name>').exitOverride();
  registerDiscordCommand(p);
  return p;
}

const ENV_KEYS = [
  'DISCORD_TOKEN',
  'DISCORD_API_URL',
  'DISCORD_CHANNEL_ID',
  'AGENT_JUDGE_APPROVERS',
  'LOG_LEVEL',
] as const;

describe('agent-judge discord', () => {
  let fake: FakeDiscord;
  let dir: string;
  const saved: Record<string, string | undefined> = {};
  beforeAll(async () => {
    fake = await FakeDiscord.start();
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-discord-cli-'));
    for (const k of ENV_KEYS) saved[k] = process.env[k];
  });
  afterAll(async () => {
    for (const k of ENV_KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
    await fake.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses to start without DISCORD_TOKEN', async () => {
    delete process.env.DISCORD_TOKEN;
    await expect(program().parseAsync(['node', 'agent-judge', 'discord'])).rejects.toBeInstanceOf(BadInputError);
  });

  it('runs the bot until SIGINT and keeps governance events in --governance-log', async () => {
    const approver = fake.addUser('approver');
    const stranger = fake.addUser('stranger');
    Object.assign(process.env, {
      DISCORD_TOKEN: FAKE_TOKEN,
      DISCORD_API_URL: fake.apiUrl,
      AGENT_JUDGE_APPROVERS: `discord:${approver.id}`,
      LOG_LEVEL: 'silent',
    });
    const log = join(dir, 'governance.jsonl');
    const running = program().parseAsync([
      'node',
      'agent-judge',
      '--address',
      inject('temporalAddress'),
      '--namespace',
      inject('temporalNamespace'),
      'discord',
      '--governance-log',
      log,
    ]);
    await fake.waitForGatewaySession(20_000);

    const notice = sampleNotice({ approvers: [`discord:${approver.id}`] });
    const [ref] = (await createDiscordNotifier({
      token: FAKE_TOKEN,
      apiUrl: fake.apiUrl,
      logger: pino({ level: 'silent' }),
    }).announce(notice)) as DiscordAnnouncementRef[];
    const click = await fake.click({
      messageId: ref!.message_id,
      customId: buttonCustomId('approve', notice.workflow_id),
      userId: stranger.id,
    });
    expect(click.ephemeral).toBe(true);
    const events = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events).toEqual([
      expect.objectContaining({
        event: 'governance',
        kind: 'unauthorized_click',
        actor: `discord:${stranger.id}`,
        workflow_id: notice.workflow_id,
      }),
    ]);

    process.emit('SIGINT');
    await running;
    await fake.waitFor(() => fake.gatewaySessions === 0, 10_000, 'the bot to disconnect');
  });

  it('startDiscordBotFromEnv says Discord is off without a token, and connects with one', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    const client = new Client({ connection, namespace: inject('temporalNamespace') });
    try {
      const { defaultPolicyWith } = await import('../../src/policy/load');
      const policy = defaultPolicyWith();
      expect(await startDiscordBotFromEnv({ client, policy, logger, env: {} })).toBeNull();
      expect(lines.join('')).toContain('Discord escalation is off: DISCORD_TOKEN is not set');
      const bot = await startDiscordBotFromEnv({
        client,
        policy,
        logger,
        env: { DISCORD_TOKEN: FAKE_TOKEN, DISCORD_API_URL: fake.apiUrl },
      });
      expect(bot?.userId).toBe(fake.botUser.id);
      expect(lines.join('')).toContain('no discord:<user id> approvers');
      expect(lines.join('')).toContain('Discord escalation bot connected; escalations go to DMs to each approver');
      await bot?.stop();
    } finally {
      await connection.close();
    }
  });
});
