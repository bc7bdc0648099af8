import type { Executor } from './types';
import { processEnv } from '../config/process-env';

/**
 * The generic HTTP webhook executor: delivers an approved action to the operator's endpoint
 * (policy `spec.webhook.routes`), for action types executed by systems outside this process. The
 * Idempotency-Key header lets the far side drop a duplicate delivery; the Agent-Judge-Capability
 * header carries the action's capability token (already redeemed), which the receiver can verify.
 */
export function webhookExecutor(
  fetchImpl: typeof fetch = fetch,
  token = processEnv().AGENT_JUDGE_WEBHOOK_TOKEN,
): Executor {
  return {
    name: 'webhook',
    async run(ctx) {
      const url = ctx.policy.spec.webhook.routes[ctx.proposal.action_type];
      if (!url) return { ok: false, error: `no webhook route for ${ctx.proposal.action_type}` };
      const res = await fetchImpl(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': ctx.idempotencyKey,
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          // The receiver can verify it against the policy's issuers: proof this delivery was approved.
          ...(ctx.capability ? { 'agent-judge-capability': ctx.capability } : {}),
        },
        body: JSON.stringify({ workflow_id: ctx.workflowId, proposal: ctx.proposal, verdict: ctx.verdict }),
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.policy.spec.webhook.timeoutMs)]),
      });
      const text = (await res.text()).slice(0, 64 * 1024);
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* plain text answer */
      }
      return res.ok
        ? { ok: true, output: { status: res.status, body } }
        : { ok: false, output: { status: res.status, body }, error: `webhook answered HTTP ${res.status}` };
    },
  };
}
