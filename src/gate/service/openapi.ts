/**
 * The OpenAPI 3.1 document of the gate service's `/v1` API (served at `GET /v1/openapi.json`), made from the same zod
 * schemas that validate requests (src/gate/service/api.ts): a client generated from it, or checked against it (the
 * Python package's models), speaks exactly what the server accepts. OpenAPI 3.1 takes JSON Schema 2020-12 as is, which
 * is what `z.toJSONSchema` writes.
 */
import { z } from 'zod';
import {
  CallAnswerSchema,
  CallRequestSchema,
  ErrorSchema,
  OutcomeAnswerSchema,
  OutcomeRequestSchema,
  ProposalOutcomeSchema,
  RedeemAnswerSchema,
  RedeemRequestSchema,
} from './api';
import { ClarificationSchema } from '../../contracts/messages';
import { ProposalSchema } from '../../contracts/proposal-schema';

type Json = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: ref(name) } });
const error = (description: string) => ({ description, content: json('Error') });
const waitMs = {
  name: 'wait_ms',
  in: 'query',
  required: false,
  description: 'How long to wait for the proposal to settle (ms, at most 120000); then 202 with it as it stands.',
  schema: { type: 'integer', minimum: 0, maximum: 120000 },
};
const idParam = (description: string) => ({
  name: 'id',
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});

/** The document, built once per process. */
let built: Json | undefined;

export function openApiDocument(version: string): Json {
  built ??= {
    openapi: '3.1.0',
    info: {
      title: 'agent-judge gate service',
      version,
      description:
        'The one door agents reach agent-judge through: tool calls decided before they run, seed-format proposals, ' +
        'outcomes and clarifications. The bearer token decides the agent; nothing in a request can name another.',
    },
    security: [{ bearer: [] }],
    paths: {
      '/v1/calls': {
        post: {
          operationId: 'decideCall',
          summary: 'Decide one tool call; perform it only if the answer is forward, exactly with its arguments',
          requestBody: { required: true, content: json('CallRequest') },
          responses: {
            '200': { description: 'The answer, as data', content: json('CallAnswer') },
            '400': error('The request is malformed (the message names the field and the rule)'),
            '401': error('No valid bearer token'),
          },
        },
      },
      '/v1/calls/{id}/outcome': {
        post: {
          operationId: 'reportOutcome',
          summary: 'Report what happened when a forwarded call was performed (once per lease)',
          parameters: [idParam('The lease id of the forward answer')],
          requestBody: { required: true, content: json('OutcomeRequest') },
          responses: {
            '200': { description: 'Recorded on the proposal', content: json('OutcomeAnswer') },
            '400': error('The outcome is malformed'),
            '401': error('No valid bearer token'),
            '404': error('No lease of this agent with that id waits for an outcome'),
          },
        },
      },
      '/v1/proposals': {
        post: {
          operationId: 'submitProposal',
          summary: 'Submit a seed 000 §3.1 proposal (agent_id comes from the token) and wait a bounded time',
          parameters: [waitMs],
          requestBody: { required: true, content: json('Proposal') },
          responses: {
            '200': {
              description: 'Settled: finished, or waiting on a person or the agent',
              content: json('ProposalOutcome'),
            },
            '202': { description: 'Still being decided when the wait ended', content: json('ProposalOutcome') },
            '400': error('The proposal is malformed'),
            '403': error('The proposal names another agent'),
            '409': error('An identical proposal was already submitted'),
            '429': error("One of the agent's limits refuses it (the code names which)"),
          },
        },
      },
      '/v1/proposals/{id}': {
        get: {
          operationId: 'getProposal',
          summary: "One of the agent's proposals, waiting a bounded time for it to settle",
          parameters: [idParam('The proposal_id or workflow id'), waitMs],
          responses: {
            '200': { description: 'Settled', content: json('ProposalOutcome') },
            '202': { description: 'Still being decided', content: json('ProposalOutcome') },
            '404': error('No proposal of this agent with that id'),
          },
        },
      },
      '/v1/proposals/{id}/clarification': {
        post: {
          operationId: 'clarifyProposal',
          summary: "Answer a CLARIFY on one of the agent's proposals",
          parameters: [idParam('The proposal_id or workflow id')],
          requestBody: { required: true, content: json('Clarification') },
          responses: {
            '200': { description: 'The proposal after the clarification', content: json('ProposalOutcome') },
            '400': error('The clarification is malformed, or not wanted now'),
            '404': error('No proposal of this agent with that id'),
          },
        },
      },
      '/v1/capabilities/redeem': {
        post: {
          operationId: 'redeemCapability',
          summary:
            "Spend a capability token of one of the agent's proposals once, through its workflow, for the action " +
            'about to be performed; perform it only on 200',
          requestBody: { required: true, content: json('RedeemRequest') },
          responses: {
            '200': { description: 'Redeemed: this redemption is the one', content: json('RedeemAnswer') },
            '400': error('The request is malformed'),
            '401': error('No valid bearer token'),
            '404': error('No proposal workflow for the token'),
            '409': error(
              'Refused (the code names why: capability.redeemed, .expired, .action, .audience, .agent, ...)',
            ),
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'agent-judge hook token --agent @x' } },
      schemas: {
        CallRequest: schemaOf(CallRequestSchema, 'input'),
        CallAnswer: schemaOf(CallAnswerSchema, 'output'),
        OutcomeRequest: schemaOf(OutcomeRequestSchema, 'input'),
        OutcomeAnswer: schemaOf(OutcomeAnswerSchema, 'output'),
        Proposal: schemaOf(ProposalSchema, 'input'),
        ProposalOutcome: schemaOf(ProposalOutcomeSchema, 'output'),
        Clarification: schemaOf(ClarificationSchema, 'input'),
        RedeemRequest: schemaOf(RedeemRequestSchema, 'input'),
        RedeemAnswer: schemaOf(RedeemAnswerSchema, 'output'),
        Error: schemaOf(ErrorSchema, 'output'),
      },
    },
  };
  return built;
}
