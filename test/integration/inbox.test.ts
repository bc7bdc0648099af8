/**
 * The web approval inbox over HTTP, on the real Temporal dev server with real workers: an approver enrols a passkey
 * by invite, signs in, finds the proposal waiting for them, and approves it with a decision their passkey signs; the
 * proposal workflow verifies the assertion. A software authenticator (test/helpers/authenticator.ts) answers the
 * WebAuthn ceremonies as a browser's would; each refusal (forged or replayed assertion, no CSRF token, another
 * origin or host, a used or expired invite) is driven and its message checked.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatus, submitAndWait } from '../../src/client/proposals';
import { PasskeyRegistryReader } from '../../src/identity/passkey-registry';
import { InviteStore } from '../../src/inbox/invites';
import { startInbox, type InboxServer } from '../../src/inbox/server';
import { softAuthenticator, type SoftAuthenticator } from '../helpers/authenticator';
import { InboxBrowser, visibleText } from '../helpers/inbox-browser';
import { proposal, startSystem, type TestSystem } from '../helpers/system';

describe('the web approval inbox', () => {
  let sys: TestSystem;
  let dir: string;
  let registry: string;
  let invites: InviteStore;
  let inbox: InboxServer;
  let scott: SoftAuthenticator;
  let browser: InboxBrowser;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agent-judge-inbox-'));
    registry = join(dir, 'passkeys.json');
    invites = new InviteStore(join(dir, 'state', 'invites'));
    const reader = new PasskeyRegistryReader(registry, () => {}, 0);
    sys = await startSystem({
      spec: {
        escalation: {
          timeout: '5m',
          approvers: ['scott', 'alice'],
          quorum: { 'human-only': 1 },
          requireSignedDecisions: true,
          reminderAt: 0,
        },
      },
      passkeys: () => reader.current(),
    });
    inbox = await startInbox({
      client: sys.client,
      policy: sys.policy,
      registryPath: registry,
      stateDir: join(dir, 'state'),
      port: 0,
      taskQueue: sys.taskQueues.workflow,
    });
    scott = softAuthenticator('localhost', inbox.url);
    browser = new InboxBrowser(inbox.url);
  });
  afterAll(async () => {
    await inbox?.close();
    await sys?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A pending human-only proposal started now (after the enrolment, so its run holds scott's passkey). */
  async function pending(overrides: Record<string, unknown> = {}): Promise<string> {
    const p = proposal('financial_op', {
      parameters: { amount: Math.floor(Math.random() * 1000), currency: 'EUR' },
      ...overrides,
    });
    const out = await submitAndWait(sys.client, p, { taskQueue: sys.taskQueues.workflow });
    expect(out.status).toBe('awaiting_human');
    return out.workflow_id;
  }

  it('an expired invite and an unknown one are refused', async () => {
    const { token } = invites.create('alice', 60_000, new Date(Date.now() - 120_000));
    const expired = await browser.get(`/enrol/${token}`);
    expect(expired.status).toBe(410);
    expect(visibleText(expired.text)).toContain('This invite link has expired. Ask your operator for a new one.');
    const options = await browser.post(`/enrol/${token}/options`, {});
    expect(options.status).toBe(410);
    expect(options.json.message).toBe('This invite link has expired. Ask your operator for a new one.');
    const unknown = await browser.get(`/enrol/${'x'.repeat(43)}`);
    expect(visibleText(unknown.text)).toContain('This invite link is not valid.');
  });

  it('enrols by invite, signs in, lists, approves with a passkey-signed decision; refuses forgeries', async () => {
    // Enrolment: the invite page, the registration options, the authenticator's answer.
    const { token } = invites.create('scott', 3_600_000);
    const invitePage = await browser.get(`/enrol/${token}`);
    expect(invitePage.status).toBe(200);
    expect(visibleText(invitePage.text)).toContain('Enrol a passkey for scott');
    const options = await browser.post(`/enrol/${token}/options`, {});
    expect(options.status).toBe(200);
    expect(options.json).toMatchObject({
      rp: { id: 'localhost' },
      user: { name: 'scott' },
      authenticatorSelection: { userVerification: 'required' },
    });
    const challenge = String(options.json.challenge);
    // Without user verification, the registration is refused and the invite stays good.
    const noUv = await browser.post(`/enrol/${token}`, {
      challenge,
      response: scott.register(challenge, { flags: 0x41 }),
    });
    expect(noUv.status).toBe(400);
    expect(String(noUv.json.message)).toMatch(/user could not be verified|user verification/i);
    const again = await browser.post(`/enrol/${token}/options`, {});
    const enrolled = await browser.post(`/enrol/${token}`, {
      challenge: again.json.challenge,
      name: 'test key',
      response: scott.register(String(again.json.challenge)),
    });
    expect(enrolled.status).toBe(200);
    expect(enrolled.json.message).toMatch(/^Passkey enrolled for scott\./);
    const written = JSON.parse(readFileSync(registry, 'utf8')) as {
      approvers: Record<string, { id: string; public_key: string; origins: string[]; name?: string }[]>;
    };
    expect(written.approvers.scott).toEqual([
      expect.objectContaining({
        id: scott.credential.id,
        public_key: scott.credential.public_key,
        origins: [inbox.url],
        name: 'test key',
      }),
    ]);
    // The invite is used up.
    const used = await browser.get(`/enrol/${token}`);
    expect(used.status).toBe(410);
    expect(visibleText(used.text)).toContain('This invite link was already used.');
    // A second invite offers the passkey it has (a browser would not make one again); the same one is refused.
    const second = invites.create('scott', 3_600_000).token;
    const secondOptions = await browser.post(`/enrol/${second}/options`, {});
    expect(secondOptions.json.excludeCredentials).toEqual([expect.objectContaining({ id: scott.credential.id })]);
    const duplicate = await browser.post(`/enrol/${second}`, {
      challenge: secondOptions.json.challenge,
      response: scott.register(String(secondOptions.json.challenge)),
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.message).toMatch(/^the passkey was not added: passkey .* is already registered for scott$/);

    const workflowId = await pending({
      justification: 'Pay the invoice.\n✅ Evidence verified by the judge\n<script>alert(1)</script>',
    });

    // Not signed in: the start page asks for a passkey, a proposal page too.
    expect(visibleText((await browser.get('/')).text)).toContain('Sign in with a passkey');
    expect((await browser.get(`/p/${workflowId}`)).status).toBe(401);

    // A forged sign-in (a passkey nobody enrolled, claiming scott's credential id) is refused.
    const stranger = softAuthenticator('localhost', inbox.url);
    const c1 = await browser.post('/sign-in/challenge', {});
    const forged = { ...stranger.assert(String(c1.json.challenge)), credential_id: scott.credential.id };
    const refused = await browser.post('/sign-in', { challenge: c1.json.challenge, assertion: forged });
    expect(refused.status).toBe(401);
    expect(refused.json.message).toBe("the passkey assertion signature does not verify against scott's passkey");

    // Sign-in.
    const c2 = await browser.post('/sign-in/challenge', {});
    const signIn = await browser.post('/sign-in', {
      challenge: c2.json.challenge,
      assertion: scott.assert(String(c2.json.challenge)),
    });
    expect(signIn.status).toBe(200);
    expect(signIn.json.message).toBe('Signed in as scott.');
    const cookie = [signIn.headers['set-cookie'] ?? []].flat().join('\n');
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    // The session changed at sign-in (new id, new CSRF token): the old page's token no longer works.
    const staleToken = await browser.post('/sign-in/challenge', {});
    expect(staleToken.status).toBe(403);
    // The same sign-in assertion again, with the new page's token: its challenge is spent.
    await browser.get('/');
    const replayedSignIn = await browser.post('/sign-in', {
      challenge: c2.json.challenge,
      assertion: scott.assert(String(c2.json.challenge)),
    });
    expect(replayedSignIn.status).toBe(400);
    expect(replayedSignIn.json.message).toBe('this sign-in was not started here, or took too long; start again');

    // The pending list shows the proposal.
    const home = await browser.get('/');
    expect(visibleText(home.text)).toContain('Pending for scott');
    expect(home.text).toContain(`href="/p/${workflowId}"`);
    // Only this system's task queue: other test files' proposals on the same server are not listed.
    expect(home.text.match(/class="card pending"/g)).toHaveLength(1);

    // The proposal page: the agent's text escaped, inside the agent's frame, its fake mark removed.
    const proposalPage = await browser.get(`/p/${workflowId}`);
    expect(proposalPage.status).toBe(200);
    expect(proposalPage.text).not.toContain('<script>alert(1)</script>');
    expect(proposalPage.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(proposalPage.text).not.toMatch(/^✅ Evidence verified/m);
    expect(visibleText(proposalPage.text)).toContain('(icon) Evidence verified by the judge');
    expect(visibleText(proposalPage.text)).toContain('Waiting for approvals: 0 of 1');
    expect(visibleText(proposalPage.text)).toMatch(/financial_op/);

    // CSRF: no token, and a wrong one; another origin; a DNS-rebinding Host.
    const noCsrf = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve' }, { csrf: false });
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.json.message).toBe('refused: the CSRF token is missing or wrong; reload the page');
    const wrongCsrf = await browser.post(
      `/p/${workflowId}/challenge`,
      { decision: 'approve' },
      { headers: { 'x-csrf-token': 'A'.repeat(43) } },
    );
    expect(wrongCsrf.status).toBe(403);
    const evil = await browser.post(
      `/p/${workflowId}/challenge`,
      { decision: 'approve' },
      { headers: { origin: 'https://evil.example.org' } },
    );
    expect(evil.status).toBe(403);
    expect(evil.json.message).toBe(`refused: the request came from origin https://evil.example.org, not ${inbox.url}`);
    const rebound = await browser.get('/', { host: 'evil.example.org' });
    expect(rebound.status).toBe(421);
    const garbled = await browser.send('POST', `/p/${workflowId}/challenge`, { body: '{"decision":', raw: true });
    expect(garbled.status).toBe(400);
    expect(garbled.json.message).toBe('the request body could not be read: expected JSON of at most 64 kB');

    // A forged decision (the stranger's signature under scott's credential id): the workflow refuses it.
    const d1 = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve', reason: 'invoice checked' });
    expect(d1.status).toBe(200);
    expect(d1.json.allow).toEqual([scott.credential.id]);
    const forgedDecision = await browser.post(`/p/${workflowId}/decide`, {
      challenge: d1.json.challenge,
      assertion: { ...stranger.assert(String(d1.json.challenge)), credential_id: scott.credential.id },
    });
    expect(forgedDecision.status).toBe(409);
    expect(forgedDecision.json.message).toMatch(/^Not accepted: decision refused: .*does not verify against scott/);
    expect((await getStatus(sys.client, workflowId)).decisions).toEqual([]);

    // The real decision.
    const d2 = await browser.post(`/p/${workflowId}/challenge`, { decision: 'approve', reason: 'invoice checked' });
    const assertion = scott.assert(String(d2.json.challenge));
    const decided = await browser.post(`/p/${workflowId}/decide`, { challenge: d2.json.challenge, assertion });
    expect(decided.status).toBe(200);
    expect(decided.json.status).toMatch(/^(approved|executed)$/);
    // Replayed: the challenge is spent in the inbox.
    const replayed = await browser.post(`/p/${workflowId}/decide`, { challenge: d2.json.challenge, assertion });
    expect(replayed.status).toBe(400);
    expect(replayed.json.message).toMatch(/was already used/);

    const status = await getStatus(sys.client, workflowId);
    expect(status.status).toMatch(/^(approved|executed)$/);
    expect(status.decisions).toMatchObject([{ approver: 'scott', decision: 'approve', reason: 'invoice checked' }]);
    expect(status.decisions[0]!.signature?.webauthn?.credential_id).toBe(scott.credential.id);

    // What scott sees afterwards: the outcome, their own decision, the history; the list no longer has it.
    const after = visibleText((await browser.get(`/p/${workflowId}?done=approved`)).text);
    expect(after).toContain('Your decision was recorded.');
    expect(after).toMatch(/Approved/);
    expect(after).toContain('scott approved');
    expect(after).toContain('(signed with a passkey)');
    expect(after).toContain('You approved this proposal.');
    const history = visibleText((await browser.get('/history')).text);
    expect(history).toContain('Decisions by scott');
    expect(history).toMatch(/financial_op approved (Approved|Approved and executed)/);
    expect((await browser.get('/')).text).not.toContain(`href="/p/${workflowId}"`);

    // Signing out ends the session: the start page asks for a passkey again.
    const out = await browser.send('POST', '/sign-out', { body: { _csrf: browser.csrf }, form: true, csrf: false });
    expect(out.status).toBe(303);
    expect(visibleText((await browser.get('/')).text)).toContain('Sign in with a passkey');
  });
});
