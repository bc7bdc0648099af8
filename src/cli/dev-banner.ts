/**
 * What `dev` says when it starts, beyond addresses: the policy and its approvers, how decisions are signed, and
 * whether Discord and Slack get escalations; each line names what to set when something is off.
 */
import type { Env } from '../config/env';
import type { CompliancePolicy } from '../contracts/policy';
import { signingKeyFor } from '../identity/decision';

const NO_APPROVERS = 'none: escalations will time out; add some with AGENT_JUDGE_APPROVERS=you';
export const DISCORD_OFF = 'off: set DISCORD_TOKEN to get escalations in Discord (see docs/discord.md)';
const SLACK_OFF = 'off: set SLACK_BOT_TOKEN to get escalations in Slack (see docs/slack.md)';

/** The banner's Slack line: where escalations go, or what to set. */
export function describeSlack(slack: { mode: 'http' | 'socket'; url?: string } | null, env: Env): string {
  if (slack) return `escalations go to Slack (${slack.mode === 'socket' ? 'Socket Mode' : slack.url})`;
  if (env.SLACK_BOT_TOKEN) return 'posting only: set SLACK_SIGNING_SECRET or SLACK_APP_TOKEN to hear clicks';
  return SLACK_OFF;
}

/** The banner's policy lines: the file, the approvers, and warnings an operator should read before an escalation. */
export function describePolicy(policy: CompliancePolicy, path: string): string[] {
  const approvers = policy.spec.escalation.approvers;
  const unsigned = approvers.filter((a) => !signingKeyFor(policy, a));
  return [
    `policy      ${path} (${policy.metadata.name})`,
    `approvers   ${approvers.length > 0 ? approvers.join(', ') : NO_APPROVERS}`,
    ...(unsigned.length > 0
      ? [
          `            unsigned: ${unsigned.join(', ')} (anyone with access to the namespace can claim ` +
            'these ids; give them keys in escalation.approverKeys)',
        ]
      : []),
    ...Object.entries(policy.spec.escalation.quorum)
      .filter(([, n]) => (n ?? 1) > approvers.length && approvers.length > 0)
      .map(
        ([tier, n]) =>
          `            warning: ${tier} needs ${n} approvals but only ${approvers.length} approver(s) ` +
          'are listed; those escalations can only time out',
      ),
  ];
}

/** The banner's line on signed decisions: `dev` accepts unsigned ones by default, and says so. */
export function describeDecisionSigning(signing: { refused: boolean; keyless: string[] }, approvers: number): string {
  if (signing.refused) return 'unsigned decisions are refused (spec.escalation.requireSignedDecisions)';
  if (approvers === 0) return 'no approvers listed';
  if (signing.keyless.length === 0) return 'every approver signs (spec.escalation.approverKeys)';
  return (
    `unsigned decisions accepted from ${signing.keyless.join(', ')} (dev only: agent-judge worker refuses them ` +
    'unless spec.escalation.requireSignedDecisions is false)'
  );
}
