/**
 * Passkey-signed decisions on the real server: the workflow itself verifies a WebAuthn assertion whose challenge is
 * the decision's digest, against the passkey the registry file holds for the approver. A software authenticator
 * (test/helpers/authenticator.ts) makes the assertions, so each part can be broken on its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decide, decisionBindingOf, getStatus, submitAndWait } from '../../src/client/proposals';
import type { HumanDecision } from '../../src/contracts/messages';
import { addPasskey, PasskeyRegistryReader } from '../../src/identity/passkey-registry';
import { passkeyChallenge, withPasskeyAssertion } from '../../src/identity/sign-decision';
import { softAuthenticator, type SoftAuthenticator } from '../helpers/authenticator';
import { silentLogger } from '../helpers/logger';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

const ORIGIN = 'https://inbox.example.org';
const RP_ID = 'inbox.example.org';

describe('passkey-signed decisions in the workflow', () => {
  let sys: TestSystem;
  let dir: string;
  let registry: string;
  let scott: SoftAuthenticator;
  let alice: SoftAuthenticator;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-passkeys-'));
    registry = join(dir, 'passkeys.json');
    scott = softAuthenticator(RP_ID, ORIGIN);
    alice = softAuthenticator(RP_ID, ORIGIN, 'EdDSA');
    addPasskey(registry, 'scott', scott.credential);
    const reader = new PasskeyRegistryReader(registry, silentLogger, 0);
    sys = await startSystem({
      spec: {
        escalation: {
          timeout: '5m',
          approvers: ['scott', 'alice', 'bob'],
          quorum: { 'human-only': 2 },
          requireSignedDecisions: true,
          reminderAt: 0,
        },
      },
      passkeys: () => reader.current(),
    });
  });
  afterAll(async () => {
    await sys?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A pending human-only proposal (quorum 2: one approval leaves it pending); returns its id. */
  async function pending(): Promise<string> {
    const p = proposal('financial_op', { parameters: { amount: Math.floor(Math.random() * 1000), currency: 'EUR' } });
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('awaiting_human');
    return String(p.proposal_id);
  }

  /** A decision signed by `who`'s authenticator for proposal `id`, with `tamper` changing the assertion. */
  async function signed(
    id: string,
    approver: string,
    who: SoftAuthenticator,
    decision: 'approve' | 'reject' = 'approve',
    options: Parameters<SoftAuthenticator['assert']>[1] = {},
  ): Promise<HumanDecision> {
    const d: HumanDecision = { decision, approver, reason: 'looked at it', via: 'api' };
    const binding = await decisionBindingOf(sys.client, (await getStatus(sys.client, id)).workflow_id);
    const c = passkeyChallenge(binding, d);
    return withPasskeyAssertion(binding, d, c, who.assert(c.challenge, options));
  }

  it('a valid assertion decides; the same assertion sent again is refused as a replay', async () => {
    const id = await pending();
    const approval = await signed(id, 'scott', scott);
    const out = await decide(sys.client, id, approval);
    expect(out.status).toBe('awaiting_human');
    expect((await getStatus(sys.client, id)).decisions).toMatchObject([{ approver: 'scott', decision: 'approve' }]);
    await expect(decide(sys.client, id, approval)).rejects.toThrow(/already used \(nonce/);
    // An enrolment after the system started counts for proposals started after it (EdDSA this time).
    addPasskey(registry, 'alice', alice.credential);
    const next = await pending();
    await decide(sys.client, next, await signed(next, 'scott', scott));
    const done = await decide(sys.client, next, await signed(next, 'alice', alice));
    expect(done.status).toBe('approved');
    expect(done.verdict).toMatchObject({ decided_by: 'human:alice', reason: 'looked at it' });
  });

  it('a tampered signature, another verdict, another proposal, a wrong origin or rp, no UV: each refused', async () => {
    const id = await pending();
    const other = await pending();
    const good = await signed(id, 'scott', scott);
    const a = good.signature!.webauthn!;
    const sig = Buffer.from(a.signature, 'base64url');
    sig[sig.length - 1] = sig[sig.length - 1]! ^ 1;
    const tampered = {
      ...good,
      signature: { ...good.signature!, webauthn: { ...a, signature: sig.toString('base64url') } },
    };
    await expect(decide(sys.client, id, tampered)).rejects.toThrow(
      /does not verify against scott's passkey|signature is malformed/,
    );
    // The approval's assertion, offered as a reject.
    await expect(decide(sys.client, id, { ...good, decision: 'reject' })).rejects.toThrow(
      /made for another decision \(its challenge is not the digest of this decision\)/,
    );
    // The approval for `id`, sent to `other` as it is, then with `other`'s binding claimed.
    await expect(decide(sys.client, other, good)).rejects.toThrow(/signed for another run|signed for other content/);
    const otherBinding = await decisionBindingOf(sys.client, (await getStatus(sys.client, other)).workflow_id);
    const rebound = {
      ...good,
      signature: {
        ...good.signature!,
        binds: { content_sha256: otherBinding.contentSha256, run_id: otherBinding.runId },
      },
    };
    await expect(decide(sys.client, other, rebound)).rejects.toThrow(/made for another decision/);
    await expect(
      decide(sys.client, id, await signed(id, 'scott', scott, 'approve', { origin: 'https://evil.example.org' })),
    ).rejects.toThrow(/made on origin "https:\/\/evil.example.org", not one this passkey was registered for/);
    await expect(
      decide(sys.client, id, await signed(id, 'scott', scott, 'approve', { rpId: 'evil.example.org' })),
    ).rejects.toThrow(/another relying party than inbox.example.org/);
    await expect(decide(sys.client, id, await signed(id, 'scott', scott, 'approve', { flags: 0x01 }))).rejects.toThrow(
      /does not show the user verified/,
    );
    await expect(
      decide(sys.client, id, await signed(id, 'scott', scott, 'approve', { type: 'webauthn.create' })),
    ).rejects.toThrow(/not an assertion/);
    // A passkey nobody registered, and bob (no passkey, no key) signing with one.
    const stranger = softAuthenticator(RP_ID, ORIGIN);
    await expect(decide(sys.client, id, await signed(id, 'scott', stranger))).rejects.toThrow(
      /passkey .* is not registered for scott/,
    );
    await expect(decide(sys.client, id, await signed(id, 'bob', stranger))).rejects.toThrow(
      /no key or passkey for bob/,
    );
    // An unsigned claim to be scott.
    await expect(decide(sys.client, id, { decision: 'approve', approver: 'scott' })).rejects.toThrow(
      /scott must sign decisions with their passkey/,
    );
    // Nothing of that changed the proposal; scott's real assertion still decides.
    expect((await getStatus(sys.client, id)).decisions).toEqual([]);
    await decide(sys.client, id, good);
    expect((await getStatus(sys.client, id)).decisions).toMatchObject([{ approver: 'scott' }]);
  });

  it('an approval with edits signs the edited digest; unedited, re-edited or replayed assertions fail', async () => {
    const id = await pending();
    const workflowId = (await getStatus(sys.client, id)).workflow_id;
    const edits = [{ path: 'parameters.amount', value: 1 }];
    const d: HumanDecision = { decision: 'approve', approver: 'scott', reason: 'less', via: 'inbox', edits };
    const binding = await decisionBindingOf(sys.client, workflowId, edits);
    expect(binding.editedSha256).toMatch(/^[0-9a-f]{64}$/);
    const c = passkeyChallenge(binding, d);
    const edited = withPasskeyAssertion(binding, d, c, scott.assert(c.challenge));
    expect(edited.signature?.binds?.edited_sha256).toBe(binding.editedSha256);
    // Forged: the unedited decision's assertion with edits added; and the edited assertion with other edits.
    const plain = await signed(id, 'scott', scott);
    await expect(decide(sys.client, id, { ...plain, edits })).rejects.toThrow(
      /does not bind the edited action; sign the edited decision/,
    );
    await expect(
      decide(sys.client, id, { ...edited, edits: [{ path: 'parameters.amount', value: 2 }] }),
    ).rejects.toThrow(/signed for another edited action/);
    const claimed = { ...edited, signature: { ...edited.signature!, binds: { ...edited.signature!.binds! } } };
    delete claimed.signature.binds.edited_sha256;
    await expect(decide(sys.client, id, claimed)).rejects.toThrow(/does not bind the edited action/);
    expect((await getStatus(sys.client, id)).decisions).toEqual([]);
    // The real one counts (quorum 2: it stays pending), with its via; sent again, it is a replay.
    expect((await decide(sys.client, id, edited)).status).toBe('awaiting_human');
    expect((await getStatus(sys.client, id)).decisions).toMatchObject([
      { approver: 'scott', decision: 'approve', via: 'inbox', edits },
    ]);
    await expect(decide(sys.client, id, edited)).rejects.toThrow(/already decided|already used \(nonce/);
  });
});
