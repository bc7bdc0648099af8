/**
 * The protobuf descriptor of the few Temporal RPCs `agent-judge status` makes (src/client/status-rpc.ts), cut from
 * @temporalio/proto: the request and response messages of each method and every message and enum they reach.
 * Why a cut: building the whole Temporal API's reflection (every service, every message) is most of the SDK client's
 * start-up cost; this descriptor is a few percent of it. Regenerate after an SDK upgrade with
 * `node --import tsx scripts/status-rpc-descriptor.ts`; test/unit/status-rpc.test.ts fails while it is stale.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as protobuf from 'protobufjs';

const require = createRequire(import.meta.url);

/** The WorkflowService methods the status path calls. */
export const STATUS_RPC_METHODS = ['ListWorkflowExecutions', 'QueryWorkflow'] as const;

/** Error details the SDK client decodes from `grpc-status-details-bin`, which the status path decodes alike. */
export const STATUS_RPC_ERROR_TYPES = [
  'google.rpc.Status',
  'temporal.api.errordetails.v1.NamespaceNotFoundFailure',
] as const;

export const DESCRIPTOR_PATH = fileURLToPath(new URL('../src/client/status-rpc-descriptor.json', import.meta.url));

/** The outermost message or enum holding `t` (a nested type travels with its parent). */
function outermost(t: protobuf.ReflectionObject, pb: typeof protobuf): protobuf.Type | protobuf.Enum {
  let o = t;
  while (o.parent instanceof pb.Type) o = o.parent;
  return o as protobuf.Type | protobuf.Enum;
}

/** The descriptor (protobufjs JSON) holding the status methods' messages and everything they reach. */
export function statusRpcDescriptor(): unknown {
  const pb = require('protobufjs') as typeof protobuf;
  const full = (require('@temporalio/proto/protos/root.js') as protobuf.Root).resolveAll();
  const service = full.lookupService('temporal.api.workflowservice.v1.WorkflowService');
  const picked = new Map<string, protobuf.Type | protobuf.Enum>();
  const visit = (t: protobuf.ReflectionObject | null): void => {
    if (!t) return;
    const outer = outermost(t, pb);
    if (picked.has(outer.fullName)) return;
    picked.set(outer.fullName, outer);
    const walk = (type: protobuf.Type): void => {
      for (const field of type.fieldsArray) visit(field.resolvedType);
      for (const nested of type.nestedArray) if (nested instanceof pb.Type) walk(nested);
    };
    if (outer instanceof pb.Type) walk(outer);
  };
  for (const name of STATUS_RPC_METHODS) {
    const method = service.methods[name];
    if (!method) throw new Error(`WorkflowService has no method ${name}`);
    visit(full.lookupType(method.requestType));
    visit(full.lookupType(method.responseType));
  }
  for (const name of STATUS_RPC_ERROR_TYPES) visit(full.lookupType(name));
  const cut = new pb.Root();
  for (const name of [...picked.keys()].sort()) {
    const t = picked.get(name) as protobuf.Type | protobuf.Enum;
    const namespace = cut.define((t.parent as protobuf.Namespace).fullName.replace(/^\./, ''));
    namespace.add(t instanceof pb.Type ? pb.Type.fromJSON(t.name, t.toJSON()) : pb.Enum.fromJSON(t.name, t.toJSON()));
  }
  return cut.toJSON();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(DESCRIPTOR_PATH, `${JSON.stringify(statusRpcDescriptor())}\n`);
  process.stderr.write(`wrote ${DESCRIPTOR_PATH}\n`);
}
