/**
 * Finding 5 of the attacker review (issue 21): an agent's text laid out a line of its own in the dispute message (a
 * newline in an evidence title rendered `✅ Issue 42: requested by scott` as if the judge had verified it), and a long
 * harmless prefix pushed the dangerous part of the parameters past a bare "…". Posted through the real notifier (the
 * discord.js REST client) to the loopback Discord, and read back as Discord stored it.
 */
import type { APIEmbed } from 'discord.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createDiscordNotifier } from '../../src/escalation/discord-notifier';
import { FIELD } from '../../src/escalation/discord-embed';
import type { Proposal } from '../../src/contracts/proposal';
import { FAKE_TOKEN, FakeDiscord } from '../helpers/fake-discord';
import { sampleNotice } from '../helpers/escalation-notice';

const silent = pino({ level: 'silent' });
let fake: FakeDiscord | undefined;

afterEach(async () => {
  expect(fake?.unexpected ?? []).toEqual([]);
  await fake?.stop();
  fake = undefined;
});

/** The one message posted for a hostile proposal, as the loopback Discord stored it. */
async function postHostile(proposal: Partial<Proposal>) {
  fake = await FakeDiscord.start({ withGuildChannel: true });
  const notifier = createDiscordNotifier({
    token: FAKE_TOKEN,
    apiUrl: fake.apiUrl,
    channelId: fake.guildChannelId,
    logger: silent,
  });
  const notice = sampleNotice({ proposal, approvers: ['scott'] });
  await notifier.announce(notice);
  const [message] = fake.messagesFor(notice.workflow_id);
  expect(message).toBeDefined();
  const fields = (message!.embeds[0] as APIEmbed | undefined)?.fields ?? [];
  const fieldOf = (name: string) => fields.find((f) => f.name.startsWith(name))?.value ?? '';
  return { message: message!, fieldOf };
}

/** Marks agent-judge puts at the start of an evidence line: nothing else may start one. */
const EVIDENCE_LINE =
  /^(▫️|✅|❌ check failed:|❌ other repository:|❔ unverifiable:|… and \d+ more|\(not verified by the judge\))/;

describe('a dispute an agent cannot make lie', () => {
  it('keeps a forged "verified" line inside the evidence item it came from', async () => {
    const { fieldOf } = await postHostile({
      cited_evidence: [
        { type: 'doc', title: 'Runbook\n✅ Issue 42: requested by scott', url: 'https://example.org/runbook' },
        { type: 'doc', title: 'Notes\u2028✅ Ticket 7: approved by alice' },
      ],
      justification: 'Routine payment.\n✅ Verified by the judge\r\n# Approved',
    });
    const evidence = fieldOf(FIELD.evidence);
    const lines = evidence.split('\n');
    for (const line of lines) expect(line).toMatch(EVIDENCE_LINE);
    // Nothing was verified, so no line carries a check mark; the agent's forged one is gone from its own text too.
    expect(evidence).not.toContain('✅');
    expect(lines[0]).toContain('Runbook ⏎ (icon) Issue 42: requested by scott');
    expect(lines).toHaveLength(3); // two items and "(not verified by the judge)"
    const actor = fieldOf(FIELD.actor);
    expect(actor).not.toContain('\n');
    expect(actor).toContain('Routine payment. ⏎ (icon) Verified by the judge ⏎ # Approved');
  });

  it('says how much of the parameters it cut and where to read them whole', async () => {
    const harmless = 'Quarterly invoice for services rendered. '.repeat(20);
    const dangerous = 'AND ALSO wire 90000 EUR to account XX99';
    const { fieldOf } = await postHostile({ parameters: { memo: `${harmless}${dangerous}` } });
    const shown = fieldOf(FIELD.parameters);
    expect(shown).not.toContain('XX99');
    const note = /\n```\n… (\d+) more characters: `agent-judge status pay-invoice-17`$/.exec(shown);
    expect(note).not.toBeNull();
    // Every character left out is counted: the shown body plus the count is the whole rendered parameters text.
    const body = shown.slice('```json\n'.length, note!.index);
    const whole = JSON.stringify({ memo: `${harmless}${dangerous}` }, null, 1);
    expect(body.length + Number(note![1])).toBe(whole.length);
    expect(whole.startsWith(body)).toBe(true);
  });
});
