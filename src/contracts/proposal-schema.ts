/**
 * The full proposal schema, for JSON Schema export only. Apart from `proposal.ts` because building the union of every
 * action type costs milliseconds, and the proposal workflow (whose modules the SDK evaluates afresh for every run)
 * validates with `safeParseProposal`, which never needs it (docs/performance.md).
 */
import { z } from 'zod';
import { actionShapes, KNOWN_ACTION_TYPES, ProposalEnvelopeSchema as StoredEnvelope } from './proposal';

/**
 * What a submitter sends: `proposal_id` may be left out (the proposal is then named by its content, its workflow id;
 * src/client/proposals/submit.ts fills it in). Every stored proposal has one.
 */
const ProposalEnvelopeSchema = StoredEnvelope.extend({
  proposal_id: StoredEnvelope.shape.proposal_id
    .optional()
    .describe(
      'Left out: the proposal is named by its content (proposal-<32 hex>, its workflow id), which needs no ' +
        'reservation. The forms proposal-<32 hex> and mcp-<32 hex> are kept for such names.',
    ),
});

/**
 * The proposal schema with every known action type spelled out. Used for JSON Schema export; code
 * validates with {@link parseProposal}, which gives field-level errors for one action type only.
 */
export const ProposalSchema = z.union([
  ...KNOWN_ACTION_TYPES.map((t) =>
    ProposalEnvelopeSchema.extend({
      action_type: z.literal(t),
      target: actionShapes[t].target,
      parameters: actionShapes[t].parameters,
    }),
  ),
  // The catch-all branch must not match a known type, or a JSON Schema validator would accept a
  // known action with any target and parameters through it.
  ProposalEnvelopeSchema.extend({
    action_type: z
      .string()
      .regex(
        new RegExp(`^(?!(?:${KNOWN_ACTION_TYPES.join('|')})$)[a-z][a-z0-9_]{0,63}$`),
        'expected a snake_case action type other than the known ones',
      )
      .describe('Any other action type: always routed to a human.'),
  }),
] as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]]);
