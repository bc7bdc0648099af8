/**
 * Scoped grants, client side (docs/grants.md): make a grant's definition from a proposal, start its workflow and
 * say at once whether the workflow took it, list, show and revoke grants. The grant workflow is the authority; this
 * module only asks it.
 */
import { randomBytes } from 'node:crypto';
import { WorkflowIdReusePolicy, type Client, WorkflowFailedError } from '@temporalio/client';
import { actionDigest } from '../contracts/capability';
import { describeIssues } from '../contracts/zod-error';
import { BadInputError, NotFoundError } from '../contracts/errors';
import { innermostMessage } from '../contracts/innermost-message';
import {
  GrantIdSchema,
  GrantRequestSchema,
  GrantDefinitionSchema,
  type GrantDefinition,
  type GrantMatch,
  type GrantRequest,
  type GrantRevocation,
  type GrantStatus,
} from '../contracts/grant';
import type { CompliancePolicy } from '../contracts/policy';
import type { Proposal } from '../contracts/proposal';
import type { Refusal } from '../contracts/refusal';
import { sendRevocation } from '../escalation/grant-revoke';
import { tierFor } from '../policy/classify';
import { refuseGrantByPolicy } from '../policy/grants';
import {
  DEFAULT_TASK_QUEUES,
  GRANT_MEMO_KEY,
  GRANT_WORKFLOW_ID_PREFIX,
  GRANT_WORKFLOW_TYPE,
  grantStatusQuery,
  grantWorkflowId,
} from '../names';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A new grant id: `g` and 20 random base32 characters (100 bits). */
export function newGrantId(): string {
  const bytes = randomBytes(20);
  let id = 'g';
  for (const b of bytes) id += BASE32[b & 31];
  return id;
}

/** How a grant made from a proposal narrows what it covers. */
export type GrantScopeChoice =
  | { kind: 'identical' }
  /** `same`: dotted fields of the proposal (`target.cwd`, `parameters.command`) that must stay equal; `under` a dir. */
  | { kind: 'pattern'; same?: string[]; under?: string };

export interface GrantFromProposal {
  approver: string;
  /** How long the grant lives, in milliseconds. */
  lifetimeMs: number;
  maxUses: number;
  scope: GrantScopeChoice;
  /**
   * Scope the grant to one runtime session (a coding agent's session id, see {@link grantSessionFor}): it then covers
   * only that agent's proposals carrying this `session_id`. Absent, every session of the agent (and none).
   */
  sessionId?: string;
  reason?: string;
  originWorkflowId?: string;
  now?: Date;
}

/** The definition of a grant for calls like `proposal` (same agent, same action type, narrowed by `scope`). */
export function grantDefinitionFor(proposal: Proposal, options: GrantFromProposal): GrantDefinition {
  const now = options.now ?? new Date();
  let match: GrantMatch;
  if (options.scope.kind === 'identical') {
    match = { kind: 'identical', action_sha256: actionDigest(proposal) };
  } else {
    const target: Record<string, unknown> = {};
    const parameters: Record<string, unknown> = {};
    for (const field of options.scope.same ?? []) {
      const [part, name, ...rest] = field.split('.');
      const from = part === 'target' ? proposal.target : part === 'parameters' ? proposal.parameters : undefined;
      if (!from || !name || rest.length > 0)
        throw new BadInputError(`same: expected target.<field> or parameters.<field>, got ${JSON.stringify(field)}`);
      if (!Object.hasOwn(from, name))
        throw new BadInputError(
          `same: the proposal has no ${field} (it has ${Object.keys(from).join(', ') || 'none'})`,
        );
      (part === 'target' ? target : parameters)[name] = from[name];
    }
    match = {
      kind: 'pattern',
      ...(Object.keys(target).length > 0 ? { target } : {}),
      ...(Object.keys(parameters).length > 0 ? { parameters } : {}),
      ...(options.scope.under !== undefined ? { under: options.scope.under } : {}),
    };
  }
  const parsed = GrantDefinitionSchema.safeParse({
    grant_id: newGrantId(),
    approver: options.approver,
    agent_id: proposal.agent_id,
    ...(options.sessionId !== undefined ? { session_id: options.sessionId } : {}),
    action_type: proposal.action_type,
    match,
    max_uses: options.maxUses,
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + options.lifetimeMs).toISOString(),
    ...(options.reason ? { reason: options.reason } : {}),
    ...(options.originWorkflowId ? { origin_workflow_id: options.originWorkflowId } : {}),
  });
  if (!parsed.success) throw new BadInputError(describeIssues('grant', parsed.error.issues));
  return parsed.data;
}

/**
 * The session a grant made from `proposal` is scoped to: `explicit` (an id the approver named) or, with `thisSession`,
 * the proposal's own `session_id`; undefined for neither. A proposal without a session cannot give one.
 */
export function grantSessionFor(
  proposal: Pick<Proposal, 'session_id' | 'proposal_id'>,
  options: { explicit?: string; thisSession?: boolean },
): string | undefined {
  if (options.explicit !== undefined && options.thisSession)
    throw new BadInputError('grant session: give either a session id or "this session", not both');
  if (!options.thisSession) return options.explicit;
  if (proposal.session_id === undefined)
    throw new BadInputError(
      `grant session: proposal ${proposal.proposal_id} carries no session_id (only calls from a coding agent's ` +
        'session do), so a grant cannot be scoped to its session',
    );
  return proposal.session_id;
}

/**
 * Why `policy` refuses this grant (grants off, a tier grants may not cover, a quorum, uses or lifetime above the
 * bounds), or null: the grant workflow's own check, asked before anything starts (the inbox asks it before the
 * decision that comes with a grant is sent). The workflow checks again with the policy it runs.
 */
export function refuseGrantUnderPolicy(policy: CompliancePolicy, definition: GrantDefinition): Refusal | null {
  return refuseGrantByPolicy(policy, definition, tierFor(policy, definition.action_type));
}

/**
 * Starts the grant's workflow and waits (up to `waitMs`, default 10 s) until it has checked the signature and the
 * policy's bounds: resolves with its status when live, throws {@link BadInputError} with the workflow's reason when
 * refused. A grant is never started twice under one id.
 */
export async function createGrant(
  client: Client,
  request: GrantRequest,
  options: { taskQueue?: string; waitMs?: number } = {},
): Promise<GrantStatus> {
  const parsed = GrantRequestSchema.safeParse(request);
  if (!parsed.success) throw new BadInputError(describeIssues('grant', parsed.error.issues));
  const { definition } = parsed.data;
  const workflowId = grantWorkflowId(definition.grant_id);
  const handle = await client.workflow.start(GRANT_WORKFLOW_TYPE, {
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUES.workflow,
    workflowId,
    args: [parsed.data],
    memo: { [GRANT_MEMO_KEY]: definition },
    workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
  });
  const deadline = Date.now() + (options.waitMs ?? 10_000);
  for (;;) {
    const described = await handle.describe();
    if (described.status.name !== 'RUNNING') {
      let status: GrantStatus;
      try {
        status = (await handle.result()) as GrantStatus;
      } catch (err) {
        if (err instanceof WorkflowFailedError) throw new BadInputError(`grant refused: ${innermostMessage(err)}`);
        throw err;
      }
      if (status.state === 'refused') throw new BadInputError(`grant refused: ${status.refusal}`);
      return status;
    }
    let status: GrantStatus;
    try {
      status = await handle.query(grantStatusQuery);
    } catch (err) {
      // "still starting": the workflow has not checked the grant yet.
      if (Date.now() > deadline)
        throw new BadInputError(
          `grant ${definition.grant_id} was started but no workflow worker checked it within ` +
            `${Math.round((options.waitMs ?? 10_000) / 1000)}s (${innermostMessage(err)}); is a worker running?`,
        );
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    if (status.state === 'refused') throw new BadInputError(`grant refused: ${status.refusal}`);
    return status;
  }
}

function requireGrantId(id: string): string {
  const bare = id.startsWith(GRANT_WORKFLOW_ID_PREFIX) ? id.slice(GRANT_WORKFLOW_ID_PREFIX.length) : id;
  const parsed = GrantIdSchema.safeParse(bare);
  if (!parsed.success) throw new BadInputError(describeIssues('grant_id', parsed.error.issues));
  return parsed.data;
}

/** A grant's status: its live state from the workflow, or, once closed, its final status or why it was refused. */
export async function grantStatus(client: Client, id: string): Promise<GrantStatus> {
  const grantId = requireGrantId(id);
  const handle = client.workflow.getHandle(grantWorkflowId(grantId));
  let described;
  try {
    described = await handle.describe();
  } catch {
    throw new NotFoundError(`no grant ${grantId}`);
  }
  if (described.status.name === 'RUNNING') return handle.query(grantStatusQuery);
  try {
    return (await handle.result()) as GrantStatus;
  } catch (err) {
    const memo = GrantDefinitionSchema.safeParse(described.memo?.[GRANT_MEMO_KEY]);
    if (!memo.success)
      throw new NotFoundError(`grant ${grantId} ended without a readable record: ${innermostMessage(err)}`);
    return { definition: memo.data, state: 'refused', refusal: innermostMessage(err), uses: [], revoked: null };
  }
}

/** One row of `grants list`. */
export interface ListedGrant {
  grant_id: string;
  running: boolean;
  approver: string;
  agent_id: string;
  /** The one runtime session the grant covers, when scoped to one. */
  session_id?: string;
  action_type: string;
  match: GrantMatch;
  max_uses: number;
  expires_at: string;
  created_at: string;
}

/** Grants of a task queue from visibility, newest first: running ones, or all with `all`. */
export async function listGrants(
  client: Client,
  options: { taskQueue?: string; all?: boolean; limit?: number } = {},
): Promise<ListedGrant[]> {
  const taskQueue = options.taskQueue ?? DEFAULT_TASK_QUEUES.workflow;
  const query =
    `WorkflowType = '${GRANT_WORKFLOW_TYPE}' AND TaskQueue = '${taskQueue}'` +
    (options.all ? '' : ` AND ExecutionStatus = 'Running'`);
  const out: ListedGrant[] = [];
  for await (const w of client.workflow.list({ query })) {
    const d = GrantDefinitionSchema.safeParse(w.memo?.[GRANT_MEMO_KEY]);
    if (!d.success) continue;
    const { grant_id, approver, agent_id, session_id, action_type, match, max_uses, expires_at, created_at } = d.data;
    out.push({
      grant_id,
      running: w.status.name === 'RUNNING',
      approver,
      agent_id,
      ...(session_id !== undefined ? { session_id } : {}),
      action_type,
      match,
      max_uses,
      expires_at,
      created_at,
    });
    if (out.length >= (options.limit ?? 1000)) break;
  }
  return out;
}

/**
 * Revokes a live grant; its workflow ends, and no proposal is approved by it any more. The CLI and the inbox revoke
 * here, the chat apps' "Revoke grant" button through `revokeFromChat`: both send it with {@link sendRevocation}.
 */
export async function revokeGrant(client: Client, id: string, revocation: GrantRevocation): Promise<GrantStatus> {
  const grantId = requireGrantId(id);
  const result = await sendRevocation(client, grantId, revocation);
  if ('revoked' in result) return result.revoked;
  if ('refused' in result) throw new BadInputError(innermostMessage(result.refused));
  throw new NotFoundError(`grant ${grantId} is not running (${innermostMessage(result.unanswered)})`);
}
