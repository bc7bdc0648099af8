/**
 * `agent-judge status` and `list` over plain gRPC: the WorkflowService calls they need (find the workflow by
 * proposal_id, query its status, list proposals), made with grpc-js and a protobuf descriptor cut to those calls
 * (src/client/status-rpc-descriptor.json). Why not the SDK client: loading `@temporalio/client` builds the reflection
 * of the whole Temporal API and takes ~0.3 s of a ~0.6 s command on a small machine; this path answers in well under
 * half. It behaves as {@link getOutcome} and `listProposals` over the SDK client do: the same target (address,
 * namespace, TLS, API key, gRPC metadata from the environment and Temporal's config profiles), the same lookups,
 * answers and errors.
 * Read-only by design: anything that starts or changes a workflow goes through the SDK client.
 */
import {
  credentials,
  makeGenericClientConstructor,
  Metadata,
  status as GrpcStatus,
  type ChannelCredentials,
  type Client as GrpcClient,
  type ServiceError,
} from '@grpc/grpc-js';
import { normalizeGrpcEndpointAddress } from '@temporalio/common/lib/internal-non-workflow/parse-host-uri';
import { normalizeTlsConfig } from '@temporalio/common/lib/internal-non-workflow/tls-config';
import protobuf from 'protobufjs/light';
import { AgentJudgeError, BadInputError, NotFoundError } from '../contracts/errors';
import { outcomeOf, type ProposalOutcome, type ProposalRecord } from '../contracts/status';
import {
  PROPOSAL_ID_SEARCH_ATTRIBUTE,
  PROPOSAL_MESSAGE_NAMES,
  PROPOSAL_ID_RE,
  PROPOSAL_WORKFLOW_TYPE,
  workflowIdNamedBy,
} from '../wire-names';
import { listedProposalOf, proposalListQuery, type ListedProposal, type ListOptions } from './proposals/list-query';
import descriptor from './status-rpc-descriptor.json';
import { unreachableError, type TemporalTarget } from './target';

const SERVICE = 'temporal.api.workflowservice.v1.WorkflowService';
/** What the SDK client waits for a connection (src/client/connection.ts) before it gives up. */
const CONNECT_TIMEOUT_MS = 5000;
/** Each call's deadline: an answer that does not come within it is an error, never a hang. */
const CALL_TIMEOUT_MS = 30_000;
/** The answers after which a read is asked again (load shed by a rate limit, a server briefly unavailable). */
const RETRIED: ReadonlySet<number> = new Set([GrpcStatus.RESOURCE_EXHAUSTED, GrpcStatus.UNAVAILABLE]);
/** Visibility is eventually consistent: how often, and how long apart, a fresh proposal_id is looked up again. */
const LOOKUP_RETRIES = 8;
const LOOKUP_RETRY_MS = 250;

const root = protobuf.Root.fromJSON(descriptor);
const type = (name: string): protobuf.Type => root.lookupType(name);
const ListRequest = type('temporal.api.workflowservice.v1.ListWorkflowExecutionsRequest');
const ListResponse = type('temporal.api.workflowservice.v1.ListWorkflowExecutionsResponse');
const QueryRequest = type('temporal.api.workflowservice.v1.QueryWorkflowRequest');
const QueryResponse = type('temporal.api.workflowservice.v1.QueryWorkflowResponse');
const RpcStatus = type('google.rpc.Status');
const NamespaceNotFoundFailure = type('temporal.api.errordetails.v1.NamespaceNotFoundFailure');

/** The SDK client's gRPC client class, for the same channel behaviour. */
const ServiceClient = makeGenericClientConstructor({}, 'WorkflowService', {});

interface Payload {
  metadata?: Record<string, Uint8Array>;
  data?: Uint8Array;
}

/** A payload as the SDK's default data converter reads it (`json/plain`, `binary/null`). */
function fromPayload(payload: Payload | undefined): unknown {
  const encoding = payload?.metadata?.encoding ? Buffer.from(payload.metadata.encoding).toString('utf8') : undefined;
  if (encoding === 'binary/null' || payload === undefined) return undefined;
  if (encoding === 'json/plain') return JSON.parse(Buffer.from(payload.data ?? new Uint8Array()).toString('utf8'));
  throw new AgentJudgeError(`status: the answer has a payload encoding this client cannot read (${String(encoding)})`);
}

/** The channel credentials the SDK's Connection builds for the same TLS options. */
function channelOf(target: TemporalTarget): { creds: ChannelCredentials; options: Record<string, string | number> } {
  const tls = normalizeTlsConfig(target.tls, target.apiKey);
  const options: Record<string, string | number> = {
    // As the SDK's Connection: keep idle connections alive through load balancers, accept large answers.
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.keepalive_time_ms': 30_000,
    'grpc.keepalive_timeout_ms': 15_000,
    max_receive_message_length: 128 * 1024 * 1024,
  };
  if (!tls) return { creds: credentials.createInsecure(), options };
  if (tls.serverNameOverride) {
    options['grpc.ssl_target_name_override'] = tls.serverNameOverride;
    options['grpc.default_authority'] = tls.serverNameOverride;
  }
  const buffer = (b: Buffer | Uint8Array | undefined) => (b ? Buffer.from(b) : undefined);
  return {
    creds: credentials.createSsl(
      buffer(tls.serverRootCACertificate),
      buffer(tls.clientCertPair?.key),
      buffer(tls.clientCertPair?.crt),
    ),
    options,
  };
}

/** The namespace a NOT_FOUND names in its details, when it is about the namespace rather than the workflow. */
function missingNamespace(err: ServiceError): string | undefined {
  const raw = err.metadata?.get('grpc-status-details-bin')?.[0];
  if (!raw || typeof raw === 'string') return undefined;
  const status = RpcStatus.decode(raw) as unknown as { details?: Array<{ type_url?: string; value?: Uint8Array }> };
  for (const detail of status.details ?? []) {
    if (detail.type_url?.replace(/^type.googleapis.com\//, '') !== NamespaceNotFoundFailure.fullName.slice(1)) continue;
    if (!detail.value) continue;
    return (NamespaceNotFoundFailure.decode(detail.value) as unknown as { namespace: string }).namespace;
  }
  return undefined;
}

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as { code?: unknown }).code === 'number' && 'metadata' in err;
}

/** A read-only connection to one namespace's WorkflowService; close it with {@link StatusRpc.close}. */
export class StatusRpc {
  private readonly client: GrpcClient;
  private readonly metadata: Record<string, string>;
  private ready: Promise<void> | undefined;

  constructor(private readonly target: TemporalTarget) {
    const address = normalizeGrpcEndpointAddress(target.address, 7233);
    const { creds, options } = channelOf(target);
    this.client = new ServiceClient(address, creds, options);
    this.metadata = {
      ...Object.fromEntries(Object.entries(target.metadata ?? {}).map(([k, v]) => [k, String(v)])),
      // The SDK sends the namespace with every WorkflowService call (Temporal Cloud routes by it).
      'temporal-namespace': target.namespace,
      ...(target.apiKey ? { Authorization: `Bearer ${target.apiKey}` } : {}),
    };
  }

  /** Waits for the channel as the SDK's `Connection.connect` does: the same deadline, the same error. */
  private connected(): Promise<void> {
    this.ready ??= new Promise((resolve, reject) => {
      this.client.waitForReady(Date.now() + CONNECT_TIMEOUT_MS, (err) => {
        // grpc-js's own error ("Failed to connect before the deadline"), which the SDK passes on as is.
        if (err) reject(unreachableError(this.target, err));
        else resolve();
      });
    });
    return this.ready;
  }

  private async call(method: string, requestType: protobuf.Type, responseType: protobuf.Type, request: object) {
    await this.connected();
    const metadata = new Metadata();
    for (const [k, v] of Object.entries(this.metadata)) metadata.set(k, v);
    const bytes = Buffer.from(requestType.encode(requestType.fromObject(request)).finish());
    const deadline = Date.now() + CALL_TIMEOUT_MS;
    const once = () =>
      new Promise<Buffer>((resolve, reject) => {
        this.client.makeUnaryRequest(
          `/${SERVICE}/${method}`,
          (b: Buffer) => b,
          (b: Buffer) => b,
          bytes,
          metadata,
          { deadline },
          (err, value) => (err || !value ? reject(err ?? new Error(`${method}: empty answer`)) : resolve(value)),
        );
      });
    // Every call here only reads, so a server that sheds load (a namespace's rate limit on a cluster) or is briefly
    // unavailable is asked again after a growing pause, within the same deadline, as the SDK client's retry does.
    for (let attempt = 0; ; attempt++) {
      try {
        return responseType.decode(await once()) as unknown;
      } catch (err) {
        const pause = Math.min(100 * 2 ** attempt, 2_000);
        if (!isServiceError(err) || !RETRIED.has(err.code) || Date.now() + pause >= deadline) throw err;
        await new Promise((r) => setTimeout(r, pause));
      }
    }
  }

  /** A gRPC failure as the SDK client reports it (its `ServiceError`: a summary, the gRPC error as the cause). */
  private failure(err: unknown, fallback: string): Error {
    if (!isServiceError(err)) return err as Error;
    const namespace = err.code === GrpcStatus.NOT_FOUND ? missingNamespace(err) : undefined;
    if (namespace !== undefined) return new Error(`Namespace not found: '${namespace}'`);
    if (err.code === GrpcStatus.DEADLINE_EXCEEDED) {
      return new Error(`${fallback}: no answer within ${CALL_TIMEOUT_MS / 1000} s`, { cause: err });
    }
    return new Error(fallback, { cause: err });
  }

  /** The workflow id of a proposal_id (none looked up for a workflow id or a content name); null when none is seen. */
  async findWorkflowId(idOrWorkflowId: string): Promise<string | null> {
    const named = workflowIdNamedBy(idOrWorkflowId);
    if (named !== null) return named;
    if (!PROPOSAL_ID_RE.test(idOrWorkflowId)) {
      throw new BadInputError(`proposal_id: ${JSON.stringify(idOrWorkflowId)} is not a valid proposal id`);
    }
    const attribute = PROPOSAL_ID_SEARCH_ATTRIBUTE;
    const query = `WorkflowType = '${PROPOSAL_WORKFLOW_TYPE}' AND ${attribute} = '${idOrWorkflowId}'`;
    for (let attempt = 0; ; attempt++) {
      let answer: { executions?: Array<{ execution?: { workflowId?: string } }> };
      try {
        answer = (await this.call('ListWorkflowExecutions', ListRequest, ListResponse, {
          namespace: this.target.namespace,
          pageSize: 2,
          query,
        })) as typeof answer;
      } catch (err) {
        throw this.failure(err, 'Failed to list workflows');
      }
      const found = (answer.executions ?? []).map((e) => e.execution?.workflowId ?? '');
      // Two proposals raced in under one proposal_id: never guess which one a person meant.
      if (found.length > 1) {
        const ids = found.join(', ');
        throw new BadInputError(
          `proposal_id ${idOrWorkflowId} names more than one proposal (${ids}); use the workflow id instead`,
        );
      }
      if (found[0]) return found[0];
      if (attempt >= LOOKUP_RETRIES) return null;
      await new Promise((r) => setTimeout(r, LOOKUP_RETRY_MS));
    }
  }

  /** The status Query's answer for a proposal_id or workflow id. */
  async getStatus(id: string): Promise<ProposalRecord> {
    const workflowId = await this.findWorkflowId(id);
    if (!workflowId) throw new NotFoundError(`no proposal with id ${id}`);
    type QueryAnswer = { queryResult?: { payloads?: Payload[] }; queryRejected?: { status?: unknown } | null };
    let answer: QueryAnswer;
    try {
      answer = (await this.call('QueryWorkflow', QueryRequest, QueryResponse, {
        namespace: this.target.namespace,
        execution: { workflowId },
        query: { queryType: PROPOSAL_MESSAGE_NAMES.status, queryArgs: { payloads: [] } },
      })) as typeof answer;
    } catch (err) {
      if (isServiceError(err) && err.code === GrpcStatus.NOT_FOUND && missingNamespace(err) === undefined) {
        throw new NotFoundError(`no proposal with id ${id}`);
      }
      if (isServiceError(err) && err.code === GrpcStatus.INVALID_ARGUMENT) {
        throw new AgentJudgeError(err.details || err.message);
      }
      throw this.failure(err, 'Failed to query Workflow');
    }
    if (answer.queryRejected) throw new AgentJudgeError(`status: the query was rejected (${workflowId})`);
    return fromPayload(answer.queryResult?.payloads?.[0]) as ProposalRecord;
  }

  /** `list`: proposals from visibility, newest first, as {@link listProposals} over the SDK client gives them. */
  async listProposals(options: ListOptions = {}): Promise<ListedProposal[]> {
    const { limit = 1000 } = options;
    const query = proposalListQuery(options);
    type Timestamp = { seconds?: number | { toString(): string }; nanos?: number } | null | undefined;
    type ListAnswer = {
      executions?: Array<{
        execution?: { workflowId?: string };
        startTime?: Timestamp;
        closeTime?: Timestamp;
        searchAttributes?: { indexedFields?: Record<string, Payload> } | null;
        memo?: { fields?: Record<string, Payload> } | null;
      }>;
      nextPageToken?: Uint8Array;
    };
    const dateOf = (t: Timestamp) =>
      t ? new Date(Number(String(t.seconds ?? 0)) * 1000 + Math.floor((t.nanos ?? 0) / 1e6)) : undefined;
    const rows: ListedProposal[] = [];
    let nextPageToken: Uint8Array | undefined;
    do {
      let answer: ListAnswer;
      try {
        answer = (await this.call('ListWorkflowExecutions', ListRequest, ListResponse, {
          namespace: this.target.namespace,
          pageSize: Math.min(limit - rows.length, 1000),
          query,
          ...(nextPageToken ? { nextPageToken } : {}),
        })) as ListAnswer;
      } catch (err) {
        throw this.failure(err, 'Failed to list workflows');
      }
      for (const e of answer.executions ?? []) {
        const fields = e.searchAttributes?.indexedFields ?? {};
        rows.push(
          listedProposalOf({
            workflowId: e.execution?.workflowId ?? '',
            startTime: dateOf(e.startTime) ?? new Date(0),
            closeTime: dateOf(e.closeTime),
            attribute: (name) => fromPayload(fields[name]),
            memo: (key) => fromPayload(e.memo?.fields?.[key]),
          }),
        );
        if (rows.length >= limit) return rows;
      }
      nextPageToken = answer.nextPageToken?.length ? answer.nextPageToken : undefined;
    } while (nextPageToken);
    return rows;
  }

  close(): void {
    this.client.close();
  }
}

/** `agent-judge list`: proposals from visibility, over a connection opened and closed for it. */
export async function listProposalsOverRpc(target: TemporalTarget, options: ListOptions): Promise<ListedProposal[]> {
  const rpc = new StatusRpc(target);
  try {
    return await rpc.listProposals(options);
  } finally {
    rpc.close();
  }
}

/** `agent-judge status`: the outcome of one proposal, over a connection opened and closed for it. */
export async function getOutcomeOverRpc(target: TemporalTarget, id: string): Promise<ProposalOutcome> {
  const rpc = new StatusRpc(target);
  try {
    return outcomeOf(await rpc.getStatus(id));
  } finally {
    rpc.close();
  }
}
