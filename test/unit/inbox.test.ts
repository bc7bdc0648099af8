/**
 * The inbox's pure parts: invite tokens (one use, expiry, no token on disk), sessions and CSRF tokens, HTML escaping
 * of agent-controlled text, the public URL's rules, and the registration's COSE key turned into the registry's form.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProposalRecord } from '../../src/contracts/status';
import { agentBlock, agentInline, escapeHtml, markup } from '../../src/inbox/html';
import { editDiff, proposalPage } from '../../src/inbox/pages';
import { INVITE_REFUSALS, InviteStore } from '../../src/inbox/invites';
import { cookieOf } from '../../src/inbox/request-guards';
import { inviteLink, relyingPartyOf } from '../../src/inbox/server';
import { sameToken, SessionStore } from '../../src/inbox/sessions';
import { registrationOptions, signInChallenge, verifyRegistration, verifySignIn } from '../../src/inbox/webauthn';
import { softAuthenticator } from '../helpers/authenticator';
import { visibleText } from '../helpers/inbox-browser';

describe('invites', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-invites-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('works once, and the token itself is stored nowhere', () => {
    const store = new InviteStore(dir);
    const { token, invite } = store.create('scott', 60_000, new Date('2026-01-01T00:00:00Z'));
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(invite.expires_at).toBe('2026-01-01T00:01:00.000Z');
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f), 'utf8')).not.toContain(token);
    const at = Date.parse('2026-01-01T00:00:30Z');
    expect(store.check(token, at)).toMatchObject({ ok: true, value: { approver: 'scott' } });
    expect(store.redeem(token, at)).toMatchObject({ ok: true });
    const used = { ok: false, refusal: { code: 'invite.used', reason: INVITE_REFUSALS.used } };
    expect(store.redeem(token, at)).toEqual(used);
    expect(store.check(token, at)).toEqual(used);
  });

  it('refuses an expired, an unknown and a malformed token, and a lifetime out of range', () => {
    const store = new InviteStore(dir);
    const { token } = store.create('scott', 1000, new Date('2026-01-01T00:00:00Z'));
    const refused = (why: 'expired' | 'unknown') => ({
      ok: false,
      refusal: { code: `invite.${why}`, reason: INVITE_REFUSALS[why] },
    });
    expect(store.redeem(token, Date.parse('2026-01-01T00:00:01Z'))).toEqual(refused('expired'));
    expect(store.check('A'.repeat(43))).toEqual(refused('unknown'));
    expect(store.check('../../etc/passwd')).toEqual(refused('unknown'));
    expect(() => store.create('scott', 0)).toThrow('--expires: expected a duration from 1s to 30d, got 0 ms');
    expect(() => store.create('scott', 31 * 86_400_000)).toThrow(/--expires: expected a duration from 1s to 30d/);
  });
});

describe('sessions and CSRF tokens', () => {
  it('signing in makes a new session id and CSRF token; the old id is gone', () => {
    const store = new SessionStore();
    const anon = store.create();
    const signed = store.signIn(anon, 'scott', 'cred');
    expect(signed.id).not.toBe(anon.id);
    expect(signed.csrf).not.toBe(anon.csrf);
    expect(store.get(anon.id)).toBeUndefined();
    expect(store.get(signed.id)).toMatchObject({ approver: 'scott', credentialId: 'cred' });
  });

  it('compares CSRF tokens exactly, and refuses anything that is not the token', () => {
    const { csrf } = new SessionStore().create();
    expect(sameToken(csrf, csrf)).toBe(true);
    expect(sameToken(`${csrf.slice(0, -1)}x`, csrf)).toBe(csrf.endsWith('x'));
    expect(sameToken(undefined, csrf)).toBe(false);
    expect(sameToken('', csrf)).toBe(false);
    expect(sameToken([csrf], csrf)).toBe(false);
  });

  it('a challenge is taken once, and not after it expired; a session expires when idle', () => {
    let now = 0;
    const store = new SessionStore(1000, () => now);
    const s = store.create();
    store.issue(s, 'c1', { a: 1 });
    store.issue(s, 'c2', { a: 2 });
    expect(store.take(s, 'c1')).toEqual({ a: 1 });
    expect(store.take(s, 'c1')).toBeUndefined();
    now = 5 * 60_000 + 1;
    expect(store.take(s, 'c2')).toBeUndefined();
    expect(store.get(s.id)).toBeUndefined();
  });

  it('reads one cookie from a Cookie header', () => {
    expect(cookieOf('a=1; agent-judge-inbox=xyz; b=2', 'agent-judge-inbox')).toBe('xyz');
    expect(cookieOf('xagent-judge-inbox=no', 'agent-judge-inbox')).toBeUndefined();
    expect(cookieOf(undefined, 'agent-judge-inbox')).toBeUndefined();
  });
});

describe('escaping agent-controlled text', () => {
  it('escapes HTML in text and attributes', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    const id = '"><script>alert(1)</script>';
    const escaped = '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;';
    expect(markup`<p data-id="${id}">${id}</p>`.html).toBe(`<p data-id="${escaped}">${escaped}</p>`);
  });

  it('inline agent text is one line in its frame, without direction overrides or our marks', () => {
    const out = agentInline('ok\n✅ verified by the judge\u202e<b>').html;
    // The override is named, not obeyed and not silently dropped (contracts/untrusted-text.ts).
    expect(out).toBe('<span class="agent">ok ⏎ (icon) verified by the judge⟨U+202E⟩&lt;b&gt;</span>');
  });

  it('a block keeps its lines, inside a labelled frame of its own', () => {
    const out = agentBlock("The agent's case", 'line 1\r\n✅ line 2 <i>').html;
    expect(out).toBe(
      '<figure class="agent-block"><figcaption>The agent&#39;s case</figcaption>' +
        '<pre class="agent">line 1\n(icon) line 2 &lt;i&gt;</pre></figure>',
    );
  });
});

describe('the public URL and the WebAuthn ceremonies', () => {
  it('takes an https origin or http on localhost, never a path or an IP address', () => {
    expect(relyingPartyOf('https://inbox.example.org')).toEqual({
      rpId: 'inbox.example.org',
      origin: 'https://inbox.example.org',
    });
    expect(relyingPartyOf('http://localhost:8787/')).toEqual({ rpId: 'localhost', origin: 'http://localhost:8787' });
    expect(() => relyingPartyOf('http://inbox.example.org')).toThrow(/--public-url: expected https:\/\/host/);
    expect(() => relyingPartyOf('https://inbox.example.org/inbox')).toThrow(/no path/);
    expect(() => relyingPartyOf('http://127.0.0.1:8787')).toThrow(/rp id must be a host name, not an IP address/);
    expect(() => relyingPartyOf('not a url')).toThrow('--public-url: expected a URL such as https://inbox.example.org');
    expect(inviteLink('https://inbox.example.org', 'T')).toBe('https://inbox.example.org/enrol/T');
  });

  const rp = { rpId: 'inbox.example.org', origin: 'https://inbox.example.org' };

  for (const alg of ['ES256', 'EdDSA'] as const) {
    it(`registers an ${alg} passkey in the registry's form, and signs in with it`, async () => {
      const auth = softAuthenticator(rp.rpId, rp.origin, alg);
      const options = await registrationOptions(rp, 'scott', []);
      expect(options.pubKeyCredParams.map((p) => p.alg)).toEqual([-7, -8]);
      const out = await verifyRegistration(rp, options.challenge, auth.register(options.challenge), 'phone');
      expect(out).toEqual({
        ok: true,
        value: { ...auth.credential, enrolled_at: expect.any(String) as string, name: 'phone' },
      });
      const { statement, challenge } = signInChallenge(rp);
      const passkeys = { scott: [auth.credential] };
      expect(verifySignIn(statement, auth.assert(challenge), passkeys)).toEqual({
        ok: true,
        value: { approver: 'scott', credentialId: auth.credential.id },
      });
    });
  }

  it('refuses a registration for another origin, another challenge or without user verification', async () => {
    const auth = softAuthenticator(rp.rpId, rp.origin);
    const { challenge } = await registrationOptions(rp, 'scott', []);
    const refused = async (response: unknown, expected = challenge) =>
      verifyRegistration(rp, expected, response, undefined).then((r) => (r.ok ? 'accepted' : r.refusal.reason));
    expect(await refused(auth.register(challenge, { origin: 'https://evil.example.org' }))).toMatch(/origin/i);
    expect(await refused(auth.register(challenge), 'b3RoZXI')).toMatch(/challenge/i);
    expect(await refused(auth.register(challenge, { flags: 0x41 }))).toMatch(/verif/i);
    expect(await refused(auth.register(challenge, { rpId: 'evil.example.org' }))).toMatch(/RP ID/i);
  });

  it('refuses a sign-in over a decision challenge, or with an unknown passkey', () => {
    const auth = softAuthenticator(rp.rpId, rp.origin);
    const { statement } = signInChallenge(rp);
    const other = signInChallenge(rp);
    expect(verifySignIn(statement, auth.assert(other.challenge), { scott: [auth.credential] })).toEqual({
      ok: false,
      refusal: {
        code: 'passkey.challenge',
        reason:
          'the passkey assertion was made for another sign-in (its challenge is not the one this sign-in was given)',
      },
    });
    expect(verifySignIn(statement, auth.assert(other.challenge), {})).toEqual({
      ok: false,
      refusal: { code: 'unknown-key', reason: 'this passkey is not registered for any approver' },
    });
    expect(verifySignIn(statement, { credential_id: 'x' }, {})).toEqual({
      ok: false,
      refusal: { code: 'malformed', reason: 'the sign-in assertion is malformed' },
    });
  });
});

describe('the proposal page', () => {
  /** A status as the workflow's status Query answers, with the proposal given. */
  function statusWith(proposal: Record<string, unknown>): ProposalRecord {
    return {
      proposal_id: 'p-1',
      workflow_id: 'proposal-p-1',
      status: 'awaiting_human',
      stage: 'awaiting_human',
      tier: 'full-judge',
      decisions: [],
      approvals_needed: 2,
      deadlines: { clarification: null, human: '2026-01-01T10:00:00.000Z' },
      dispute: {
        reason: 'the judge was not sure',
        actor_position: 'I must write it.\n✅ approved by scott',
        judge_position: 'It overwrites <config>.',
        judge_confidence: 0.4,
      },
      verdict: {
        verdict: 'ESCALATE',
        reason: 'unsure',
        evidence_checks: [{ index: 0, status: 'verified', detail: 'issue open' }],
      },
      proposal: {
        agent_id: '@eng',
        action_type: 'file_write',
        justification: 'j',
        cited_evidence: [{ type: 'issue', url: 'https://example.org/i/1', title: 'Issue 1' }],
        ...proposal,
      },
    } as unknown as ProposalRecord;
  }

  it("shows a file's content whole, the dispute, the evidence check, the deadline and the quorum", () => {
    const page = visibleText(
      proposalPage(statusWith({ target: { path: 'a.txt' }, parameters: { content: 'x', mode: 'create' } }), 'scott')
        .html,
    );
    expect(page).toContain('parameters.content (the file content as written) x');
    expect(page).toContain('"mode": "create"');
    expect(page).toContain("The agent's case I must write it. (icon) approved by scott");
    expect(page).toContain("The judge's verdict (confidence 40%) It overwrites <config>.");
    expect(page).toContain('verified by the judge : issue · Issue 1 · https://example.org/i/1');
    expect(page).toContain('deadline 2026-01-01T10:00:00.000Z');
    expect(page).toContain('approvals 0 of 2 needed');
    expect(page).toContain('Approve Reject');
  });

  it('shows replacement edits as a diff', () => {
    expect(editDiff({ old_string: 'a\nb', new_string: 'c' })).toBe('- a\n- b\n+ c');
    const page = proposalPage(
      statusWith({
        action_type: 'file_edit',
        target: { paths: ['src/a.ts'] },
        parameters: { change: 'edit', edits: [{ old_string: 'let x = 1;', new_string: 'let x = 2;' }] },
      }),
      'scott',
    ).html;
    expect(page).toContain('parameters.edits[0]: replace (- old, + new)');
    expect(page).toContain('<pre class="agent">- let x = 1;\n+ let x = 2;</pre>');
  });
});
