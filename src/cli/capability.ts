/**
 * `agent-judge capability verify <token>`: lets any performer of an approved action check its
 * capability token (signature by an issuer the policy lists, expiry, audience, the action digest
 * against the action it is about to perform) and redeem it once with `--redeem`.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { CapabilityRefusedError, redeemCapability, type CapabilityAction } from '../client/capabilities';
import { actionDigest, executorAudience, mcpToolCallDigest, type McpToolCall } from '../contracts/capability';
import { BadInputError } from '../contracts/errors';
import { refusalError } from '../contracts/refusal';
import { safeParseProposal } from '../contracts/proposal';
import { loadEnv } from '../config/env';
import { verifyCapability } from '../identity/capability';
import { loadCapabilityKey } from '../identity/capability-key';
import { DEFAULT_POLICY_PATH, loadPolicy } from '../policy/load';
import { printJson, readJsonInput } from './io';
import { withClient } from './shared';

/** Where `dev` keeps its capability key (its public half is trusted here too, as `dev` lists it). */
const DEV_CAPABILITY_KEY_PATH = '.agent-judge/capability.key';

interface VerifyOptions {
  action?: string;
  audience?: string;
  redeem?: boolean;
  policy?: string;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The action a FILE describes: a proposal (its action as agent-judge validates it, defaults
 * applied), `{action_type, target, parameters}`, or an MCP tool call `{tool, tool_definition_hash, arguments}`.
 */
function actionFrom(value: unknown, file: string): { action: CapabilityAction; audience?: string; digest: string } {
  if (!isRecord(value)) throw new BadInputError(`--action ${file}: expected a JSON object`);
  if (typeof value.tool === 'string') {
    if (typeof value.tool_definition_hash !== 'string' || !isRecord(value.arguments))
      throw new BadInputError(`--action ${file}: an MCP tool call needs tool, tool_definition_hash and arguments`);
    const call = value as unknown as McpToolCall;
    return { action: call, digest: mcpToolCallDigest(call) };
  }
  if (typeof value.action_type !== 'string')
    throw new BadInputError(`--action ${file}: expected a proposal, {action_type, target, parameters} or an MCP call`);
  // Digest the action as the workflow holds it: a proposal parsed with its schema's defaults.
  const asProposal =
    typeof value.proposal_id === 'string'
      ? value
      : {
          proposal_id: 'capability-check',
          agent_id: '@capability-check',
          justification: 'check',
          cited_evidence: [],
          ...value,
        };
  const parsed = safeParseProposal(asProposal);
  if (typeof value.proposal_id === 'string' && !parsed.ok) throw refusalError(parsed.refusal, `--action ${file}: `);
  const source = parsed.ok ? parsed.value : value;
  const action = { action_type: String(source.action_type), target: source.target, parameters: source.parameters };
  return { action, audience: executorAudience(action.action_type), digest: actionDigest(action) };
}

/** The issuers to trust: the policy's, plus the key `dev` made in this folder (it lists it in its policy). */
async function trustedIssuers(policyPath: string | undefined): Promise<Record<string, string>> {
  const env = loadEnv();
  const policy = await loadPolicy({ path: resolve(policyPath ?? env.AGENT_JUDGE_POLICY ?? DEFAULT_POLICY_PATH) });
  const issuers: Record<string, string> = { ...policy.spec.capabilities.issuers };
  if (!policyPath && existsSync(DEV_CAPABILITY_KEY_PATH)) {
    const dev = await loadCapabilityKey(resolve(DEV_CAPABILITY_KEY_PATH), `capability key ${DEV_CAPABILITY_KEY_PATH}`);
    issuers[dev.kid] ??= dev.publicKey;
  }
  return issuers;
}

export function registerCapabilityCommands(program: Command): void {
  const capability = program
    .command('capability')
    .description('capability tokens of approved actions: check one, redeem it once');
  capability
    .command('verify')
    .description('check a token (signature, expiry, audience, action); with --redeem, redeem it (once)')
    .argument('<token>', 'the v4.public token from the outcome JSON (capability.token)')
    .option(
      '--action <file>',
      'the action about to be performed: a proposal, {action_type,target,parameters} or an MCP call',
    )
    .option('--audience <aud>', 'the audience you are (default executor:<action_type of --action>)')
    .option('--redeem', 'redeem the token through its proposal workflow (needs --action); a token redeems once')
    .option('--policy <file>', 'policy whose spec.capabilities.issuers to trust (default $AGENT_JUDGE_POLICY)')
    .action(async (token: string, opts: VerifyOptions, cmd: Command) => {
      if (opts.redeem && !opts.action)
        throw new BadInputError('--redeem needs --action <file>: a token is redeemed for the action you perform');
      const given = opts.action ? actionFrom(await readJsonInput(opts.action, '--action'), opts.action) : undefined;
      const audience = opts.audience ?? given?.audience;
      if (opts.redeem && !audience)
        throw new BadInputError('--audience: required for an MCP tool call (e.g. mcp:<server>)');
      const issuers = await trustedIssuers(opts.policy);
      const check = verifyCapability(token, {
        issuers,
        nowMs: Date.now(),
        ...(audience ? { audience } : {}),
        ...(given ? { actionSha256: given.digest } : {}),
      });
      if (!check.ok)
        throw new CapabilityRefusedError(`capability refused: ${check.refusal.reason}`, check.refusal.code);
      const { claims, kid } = check.value;
      const result = {
        valid: true,
        token_id: claims.jti,
        kid,
        claims,
        action_checked: given !== undefined,
      };
      if (!opts.redeem) return printJson(result);
      await withClient(cmd, async (client) => {
        const redemption = await redeemCapability(client, {
          token,
          action: given!.action,
          audience: audience!,
          issuers,
          redeemer: 'cli',
        });
        printJson({ ...result, redemption });
      });
    });
}
