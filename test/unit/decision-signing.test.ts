import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateIdentity, newNonce, signBytes } from '../../src/identity/keys';
import type { HumanDecision } from '../../src/contracts/messages';
import { HumanDecisionSchema } from '../../src/contracts/messages';
import { canonicalJson, parseProposal } from '../../src/contracts/proposal';
import { proposalContentDigest, proposalWorkflowId } from '../../src/contracts/digest';
import { signDecision } from '../../src/identity/sign-decision';
import { refuseDecisionSignature, signingKeyFor, type DecisionBinding } from '../../src/identity/decision';
import { statementBytes } from '../../src/identity/verify';
import { ProposalState } from '../../src/workflows/proposal/state';
import { loadDecisionVerifier } from '../../src/workflows/decision-verifier';
import { proposal, testPolicy } from '../helpers/system';

const RUN: DecisionBinding = {
  workflowId: 'proposal-0123456789abcdef0123456789abcdef',
  runId: '01a22998-a166-7847-88b4-c526c9064326',
  contentSha256: '0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
};
const scott = generateIdentity();
const bot = generateIdentity();
const mallory = generateIdentity();
const policy = testPolicy('/tmp', {
  escalation: {
    approvers: ['scott', 'alice', 'ana', 'discord:123456789012345678'],
    approverKeys: { scott: scott.public_key },
    discordBotKey: bot.public_key,
  },
});
const approve = (approver: string, reason?: string): HumanDecision => ({
  decision: 'approve',
  approver,
  via: 'cli',
  ...(reason ? { reason } : {}),
});
const refuse = (d: HumanDecision, binding = RUN, used: string[] = []) =>
  refuseDecisionSignature(policy, binding, d, Date.now(), used)?.reason ?? null;

/** Recorded from the proposal below when v2 was made: any change to the bytes the digest covers breaks it. */
const FIXED_DIGEST = 'e2568ea5c64d821c7dc53f18da54dba48166c77a48cafd15558daddd96ddd7fe';

describe('the content digest', () => {
  const p = parseProposal({
    proposal_id: 'p-1',
    agent_id: '@engineering',
    action_type: 'financial_op',
    target: { account: 'ops' },
    parameters: { amount: 10, currency: 'EUR' },
    justification: 'pay the invoice',
    cited_evidence: [],
  });

  it('is SHA-256 over the canonical JSON of everything but proposal_id, and names the workflow', () => {
    const { proposal_id: _id, ...content } = p;
    const expected = createHash('sha256').update(canonicalJson(content)).digest('hex');
    expect(proposalContentDigest(p)).toBe(expected);
    expect(proposalWorkflowId(p)).toBe(`proposal-${expected.slice(0, 32)}`);
    expect(proposalContentDigest({ ...p, proposal_id: 'another-name' })).toBe(expected);
    expect(proposalContentDigest({ ...p, parameters: { amount: 1_000_000, currency: 'EUR' } })).not.toBe(expected);
  });

  it('gives the ids node:crypto gave before, for any text (workflow ids of existing proposals do not move)', () => {
    const odd = { ...p, justification: 'café € 😀 lone \ud800 surrogate' };
    const { proposal_id: _id, ...content } = odd;
    expect(proposalContentDigest(odd)).toBe(createHash('sha256').update(canonicalJson(content)).digest('hex'));
  });

  it('is a fixed vector', () => {
    expect(proposalContentDigest(p)).toBe(FIXED_DIGEST);
  });
});

describe('signed human decisions (v2: bound to content and run)', () => {
  it('accepts a fresh decision signed by the approver for this content and run, and it passes the schema', () => {
    const d = signDecision(RUN, approve('scott', 'budgeted'), scott);
    expect(HumanDecisionSchema.parse(d)).toEqual(d);
    expect(d.signature?.binds).toEqual({ content_sha256: RUN.contentSha256, run_id: RUN.runId });
    expect(refuse(d)).toBeNull();
  });

  it('refuses an unsigned decision from an approver with a key', () => {
    expect(refuse(approve('scott'))).toBe('scott must sign decisions (agent-judge decide --key <key file>)');
  });

  it('refuses a decision signed for another run of the same workflow id', () => {
    const d = signDecision({ ...RUN, runId: '01a22998-0000-7847-88b4-c526c9064326' }, approve('scott'), scott);
    expect(refuse(d)).toMatch(/^the decision was signed for another run of proposal-0123/);
  });

  it('refuses a decision signed for other content', () => {
    const d = signDecision({ ...RUN, contentSha256: 'f'.repeat(64) }, approve('scott'), scott);
    expect(refuse(d)).toBe(
      'the decision was signed for other content (sha256 ffffffffffffffff…, this proposal is 0123456789abcdef…)',
    );
  });

  it('refuses a signature whose claimed binding was edited to match: the bytes are this run’s own', () => {
    const d = signDecision({ ...RUN, contentSha256: 'f'.repeat(64) }, approve('scott'), scott);
    const edited = {
      ...d,
      signature: { ...d.signature!, binds: { content_sha256: RUN.contentSha256, run_id: RUN.runId } },
    };
    expect(refuse(edited)).toMatch(/does not verify/);
  });

  it('refuses a nonce this run already accepted', () => {
    const d = signDecision(RUN, approve('scott'), scott);
    expect(refuse(d, RUN, [d.signature!.nonce])).toMatch(/^this signed decision was already used \(nonce /);
  });

  it('refuses a v1 signature (bound to the workflow id only)', () => {
    const signedAt = new Date().toISOString();
    const nonce = newNonce();
    const value = signBytes(
      statementBytes('agent-judge/human-decision/v1', {
        workflow_id: RUN.workflowId,
        decision: 'approve',
        approver: 'scott',
        reason: null,
        signed_at: signedAt,
        nonce,
      }),
      scott.private_key,
    );
    expect(refuse({ ...approve('scott'), signature: { signed_at: signedAt, nonce, value } })).toBe(
      'a v1 signature binds only the workflow id, not the content or the run; sign again with this agent-judge',
    );
  });

  it('refuses a signature by someone else, or over another reason or decision', () => {
    expect(refuse(signDecision(RUN, approve('scott'), mallory))).toMatch(/does not verify against scott's key/);
    const signed = signDecision(RUN, approve('scott', 'small amount'), scott);
    expect(refuse({ ...signed, reason: 'any amount' })).toMatch(/does not verify/);
    expect(refuse({ ...signed, decision: 'reject' })).toMatch(/does not verify/);
    expect(refuse({ ...signed, approver: 'alice' })).toBeNull(); // alice has no key: not signed-checked
  });

  it('refuses a stale signature', () => {
    const old = signDecision(RUN, approve('scott'), scott, new Date(Date.now() - 10 * 60_000));
    expect(refuse(old)).toMatch(/^the decision signature signed at .* is 600s old; the freshness window is 300s; sign/);
  });

  it('discord approvers are vouched for by the bot key', () => {
    expect(signingKeyFor(policy, 'discord:123456789012345678')).toBe(bot.public_key);
    const d: HumanDecision = { decision: 'approve', approver: 'discord:123456789012345678', via: 'discord' };
    expect(refuse(d)).toMatch(/must sign/);
    expect(refuse(signDecision(RUN, d, bot))).toBeNull();
    expect(refuse(signDecision(RUN, d, mallory))).toMatch(/does not verify/);
  });

  it('approvers without a key stay unsigned unless the policy requires signatures', () => {
    expect(refuse(approve('ana'))).toBeNull();
    const strict = testPolicy('/tmp', { escalation: { approvers: ['ana'], requireSignedDecisions: true } });
    expect(refuseDecisionSignature(strict, RUN, approve('ana'), Date.now(), [])?.reason).toBe(
      'decisions must be signed, and the policy has no key or passkey for ana (add a key to ' +
        'spec.escalation.approverKeys or enrol a passkey in the inbox; spec.escalation.requireSignedDecisions: ' +
        'false accepts unsigned decisions)',
    );
  });
});

describe('ProposalState binds decisions to its own content and run', () => {
  // The workflow loads verification when an escalation opens; a state built by hand does it here.
  beforeAll(async () => {
    await loadDecisionVerifier();
  });

  const quorum2 = testPolicy('/tmp', {
    escalation: {
      approvers: ['scott', 'alice'],
      approverKeys: { scott: scott.public_key },
      quorum: { 'human-only': 2 },
    },
  });
  function awaiting(firstRunId: string | null = RUN.runId): ProposalState {
    const p = parseProposal(proposal('financial_op'));
    const s = new ProposalState(p, quorum2, proposalWorkflowId(p), 'human-only', false, 2, firstRunId);
    s.openEscalation(null, Date.now());
    s.setStage('awaiting_human');
    return s;
  }
  const bindingOf = (s: ProposalState): DecisionBinding => ({
    workflowId: s.workflowId,
    runId: RUN.runId,
    contentSha256: proposalContentDigest(s.proposal),
  });

  it('accepts a decision signed for it, then refuses the same signed decision as a replay', () => {
    const s = awaiting();
    const d = signDecision(bindingOf(s), approve('scott'), scott);
    expect(s.refuseDecision(d, Date.now())).toBeNull();
    expect(s.addDecision(d, new Date().toISOString())).toBe('pending');
    expect(s.acceptedNonces()).toEqual([d.signature!.nonce]);
    expect(s.refuseDecision(d, Date.now())?.reason).toMatch(/^this signed decision was already used/);
    // A fresh signature by the same approver is a second decision, refused as such.
    expect(s.refuseDecision(signDecision(bindingOf(s), approve('scott'), scott), Date.now())?.reason).toBe(
      'scott has already decided this proposal',
    );
  });

  it('refuses a decision signed for the same content in another state (other run, other content)', () => {
    const s = awaiting();
    const d = signDecision(bindingOf(s), approve('scott'), scott);
    expect(awaiting('01a22998-ffff-7847-88b4-c526c9064326').refuseDecision(d, Date.now())?.reason).toMatch(
      /another run/,
    );
    expect(awaiting().refuseDecision(d, Date.now())?.reason).toMatch(/other content/);
  });

  it('without a run id, no signed decision is accepted', () => {
    const s = awaiting(null);
    const d = signDecision(bindingOf(s), approve('scott'), scott);
    expect(s.refuseDecision(d, Date.now())?.reason).toMatch(/another run/);
  });
});
