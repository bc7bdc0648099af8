/** The Discord notifier (REST only) against the loopback Discord: delivery, idempotency, edits. */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDiscordNotifier,
  createDiscordNotifiersFromEnv as createNotifiersFromEnv,
  DiscordDeliveryError,
  type DiscordAnnouncementRef,
} from '../../src/escalation/discord-notifier';
import { FAKE_TOKEN, FakeDiscord, type FakeDiscordOptions } from '../helpers/fake-discord';
import { sampleNotice } from '../helpers/escalation-notice';
import type { UncertainExecutionNotice } from '../../src/contracts/escalation';
import { UNCERTAIN_EXPLANATION } from '../../src/contracts/lifecycle';

const silent = pino({ level: 'silent' });
let fake: FakeDiscord | undefined;

async function setup(options: FakeDiscordOptions = {}) {
  fake = await FakeDiscord.start(options);
  const alice = fake.addUser('alice');
  const bob = fake.addUser('bob');
  return { fake, alice, bob };
}

afterEach(async () => {
  expect(fake?.unexpected ?? []).toEqual([]);
  await fake?.stop();
  fake = undefined;
});

describe('Discord notifier', () => {
  it('DMs each discord:<id> approver the dispute, and returns where it posted', async () => {
    const { fake, alice, bob } = await setup();
    const notifier = createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent });
    const notice = sampleNotice({ approvers: ['scott', `discord:${alice.id}`, `discord:${bob.id}`] });
    const refs = (await notifier.announce(notice)) as DiscordAnnouncementRef[];

    expect(refs.map((r) => r.recipient)).toEqual([`discord:${alice.id}`, `discord:${bob.id}`]);
    expect(refs.map((r) => r.channel_id)).toEqual([fake.dmChannelOf(alice.id)!.id, fake.dmChannelOf(bob.id)!.id]);
    const posted = fake.messagesFor(notice.workflow_id);
    expect(posted).toHaveLength(2);
    expect(posted[0]!.content).toContain('**Decision needed:** financial\\_op');
    expect(posted[0]!.allowed_mentions).toEqual({ parse: [] });
    expect(fake.calls.every((c) => c.path.includes('/interactions/') || c.auth === `Bot ${FAKE_TOKEN}`)).toBe(true);
  });

  it('posts once to DISCORD_CHANNEL_ID when set', async () => {
    const { fake, alice } = await setup({ withGuildChannel: true });
    const notifier = createDiscordNotifier({
      token: FAKE_TOKEN,
      apiUrl: `${fake.apiUrl}/`,
      channelId: fake.guildChannelId,
      logger: silent,
    });
    const refs = (await notifier.announce(
      sampleNotice({ approvers: [`discord:${alice.id}`] }),
    )) as DiscordAnnouncementRef[];
    // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- vitest types matchers as any
    expect(refs).toEqual([{ notifier: 'discord', channel_id: fake.guildChannelId, message_id: expect.any(String) }]);
    expect(fake.calls.some((c) => c.path === '/users/@me/channels')).toBe(false);
  });

  it('never posts twice for one workflow: a repeat finds the earlier message', async () => {
    const { fake, alice } = await setup({ nonceWindowMs: 0 });
    const notifier = createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent });
    const notice = sampleNotice({ approvers: [`discord:${alice.id}`] });
    const first = await notifier.announce(notice);
    // A second notifier: a new worker process after a crash, with nothing in memory.
    const again = await createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent }).announce(
      notice,
    );
    expect(again).toEqual(first);
    expect(fake.messagesFor(notice.workflow_id)).toHaveLength(1);
    // Another workflow in the same DM still gets its own message.
    await notifier.announce(sampleNotice({ approvers: [`discord:${alice.id}`], proposal: { proposal_id: 'other' } }));
    expect(fake.postedMessages()).toHaveLength(2);
  });

  it('a lost response is retried with the same nonce, and Discord returns the first message', async () => {
    const { fake, alice } = await setup();
    const notifier = createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent });
    const notice = sampleNotice({ approvers: [`discord:${alice.id}`] });
    fake.failNext('POST', /^\/channels\/\d+\/messages$/, 500, { afterProcessing: true });
    const refs = (await notifier.announce(notice)) as DiscordAnnouncementRef[];
    const posts = fake.calls.filter((c) => c.method === 'POST' && /\/messages$/.test(c.path));
    expect(posts.map((c) => c.status)).toEqual([500, 200]);
    expect((posts[0]!.body as { nonce: string }).nonce).toBe((posts[1]!.body as { nonce: string }).nonce);
    expect((posts[0]!.body as { enforce_nonce: boolean }).enforce_nonce).toBe(true);
    expect(fake.messagesFor(notice.workflow_id).map((m) => m.id)).toEqual([refs[0]!.message_id]);
  });

  it('skips an approver Discord refuses, fails only when nobody can be reached', async () => {
    const { fake, alice, bob } = await setup();
    const notifier = createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent });
    fake.failNext('POST', /^\/users\/@me\/channels$/, 403);
    const refs = (await notifier.announce(
      sampleNotice({ approvers: [`discord:${alice.id}`, `discord:${bob.id}`] }),
    )) as DiscordAnnouncementRef[];
    expect(refs.map((r) => r.recipient)).toEqual([`discord:${bob.id}`]);

    fake.failNext('POST', /^\/users\/@me\/channels$/, 403);
    await expect(
      notifier.announce(sampleNotice({ approvers: [`discord:${alice.id}`], proposal: { proposal_id: 'p2' } })),
    ).rejects.toBeInstanceOf(DiscordDeliveryError);
    expect(await notifier.announce(sampleNotice({ approvers: ['scott'] }))).toEqual([]);
  });

  it('reminds approvers who have not approved, once', async () => {
    const { fake, alice, bob } = await setup();
    const notifier = createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent });
    const notice = sampleNotice({ approvers: [`discord:${alice.id}`, `discord:${bob.id}`], approvals_needed: 2 });
    const refs = (await notifier.announce(notice)) as DiscordAnnouncementRef[];
    const approvals = [
      {
        decision: 'approve' as const,
        approver: `discord:${alice.id}`,
        via: 'discord' as const,
        at: new Date().toISOString(),
      },
    ];
    await notifier.remind({ notice, refs, approvals });
    await notifier.remind({ notice, refs, approvals });
    expect(fake.repliesTo(refs[0]!.message_id)).toHaveLength(0);
    const replies = fake.repliesTo(refs[1]!.message_id);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.content).toContain('⏰ **Reminder:**');
    expect(replies[0]!.content).toContain('(1 of 2 approvals)');
  });

  it('tells approvers, once, about an action that may or may not have run, with what to check', async () => {
    const { fake, alice } = await setup({ nonceWindowMs: 0 });
    const notifier = createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent });
    const base = sampleNotice({ approvers: [`discord:${alice.id}`] });
    const notice: UncertainExecutionNotice = {
      workflow_id: base.workflow_id,
      proposal: base.proposal,
      approvers: base.approvers,
      explanation: UNCERTAIN_EXPLANATION,
      execution: {
        status: 'uncertain',
        executor: 'exec',
        shadow: false,
        started_at: '2026-11-30T10:00:00.000Z',
        finished_at: '2026-11-30T10:00:12.000Z',
        error: `attempt 1 on host-a started this action (pid 4242) and never reported back; ${UNCERTAIN_EXPLANATION}`,
      },
    };
    await notifier.uncertain!(notice);
    // A retried activity (a new worker, nothing in memory) finds the earlier post.
    await createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent }).uncertain!(notice);
    const posted = fake.messagesFor(notice.workflow_id);
    expect(posted).toHaveLength(1);
    expect(posted[0]!.content).toContain('⚠️ **Execution uncertain:** financial\\_op by @\u200bfinance');
    expect(posted[0]!.content).toContain('it will not run again. Check the target.');
    const fields = (posted[0]!.embeds[0]?.fields ?? []) as { name: string; value: string }[];
    expect(fields.find((f) => f.name === 'What the executor knows')?.value).toContain('pid 4242');
    expect(posted[0]!.components).toEqual([]);
    expect(posted[0]!.allowed_mentions).toEqual({ parse: [] });
  });

  it('resolve edits every message to the outcome and removes the buttons', async () => {
    const { fake, alice, bob } = await setup();
    const notifier = createDiscordNotifier({ token: FAKE_TOKEN, apiUrl: fake.apiUrl, logger: silent });
    const notice = sampleNotice({ approvers: [`discord:${alice.id}`, `discord:${bob.id}`] });
    const refs = await notifier.announce(notice);
    const gone = {
      notifier: 'discord',
      channel_id: (refs[0] as DiscordAnnouncementRef).channel_id,
      message_id: '999999999999999999',
    };
    const other = { notifier: 'log' };
    await notifier.resolve({
      workflow_id: notice.workflow_id,
      proposal_id: notice.proposal.proposal_id,
      status: 'rejected',
      verdict: null,
      decisions: [{ decision: 'reject', approver: 'scott', via: 'cli', reason: 'not now', at: '2030-01-01T11:00:00Z' }],
      refs: [...refs, gone, other],
    });
    for (const m of fake.messagesFor(notice.workflow_id)) {
      expect(m.content).toBe('❌ Rejected by scott');
      expect(m.components).toEqual([]);
      expect(JSON.stringify(m.embeds)).toContain('scott ❌ rejected <t:1893495600:f> via CLI: not now');
    }
  });
});

describe('notifiers from the environment', () => {
  it('is empty without DISCORD_TOKEN, and Discord with it', () => {
    expect(createNotifiersFromEnv({}, silent)).toEqual([]);
    expect(createNotifiersFromEnv({ DISCORD_TOKEN: '  ' }, silent)).toEqual([]);
    expect(
      createNotifiersFromEnv({ DISCORD_TOKEN: 't', DISCORD_API_URL: 'http://127.0.0.1:1/api' }, silent).map(
        (n) => n.name,
      ),
    ).toEqual(['discord']);
  });

  it('refuses a malformed channel id or API URL', () => {
    expect(() => createNotifiersFromEnv({ DISCORD_TOKEN: 't', DISCORD_CHANNEL_ID: 'general' }, silent)).toThrow(
      /DISCORD_CHANNEL_ID/,
    );
    expect(() => createNotifiersFromEnv({ DISCORD_TOKEN: 't', DISCORD_API_URL: 'ftp://x' }, silent)).toThrow(
      /DISCORD_API_URL/,
    );
  });
});
