/**
 * The SDK evaluates the modules a workflow imports afresh for every new run (reused V8 context), so what the proposal
 * workflow imports statically is paid on every proposal (issue 12). This evaluates the real bundle the way the SDK does
 * and checks which modules a run evaluates: the circle registry, the curve library and the schemas a proposal never
 * parses must not be among them; they load when their run needs them.
 */
import vm from 'node:vm';
import { bundleWorkflowCode } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOWS_PATH } from '../../src/workflow-code';

let evaluated: string[];
/** Module ids end with their path in the package (`./src/contracts/policy.ts`). */
const has = (modules: string[], path: string) => modules.some((m) => m.endsWith(path));
let registryRun: () => string[];

beforeAll(async () => {
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: quiet });
  const context = vm.createContext({}, { microtaskMode: 'afterEvaluate' });
  for (const name of ['TextEncoder', 'TextDecoder', 'URL', 'URLSearchParams', 'AbortController', 'console']) {
    context[name] = (globalThis as Record<string, unknown>)[name];
  }
  const shared = new Map<string | symbol, unknown>();
  let runCache: Map<string | symbol, unknown> | undefined;
  Object.defineProperty(context, '__webpack_module_cache__', {
    value: new Proxy(
      {},
      {
        get: (_, key) => shared.get(key) ?? runCache?.get(key),
        set: (_, key, value) => ((runCache ?? shared).set(key, value), true),
      },
    ),
  });
  new vm.Script(code).runInContext(context);
  const temporal = vm.runInContext('__TEMPORAL__', context) as {
    importWorkflows(): Record<string, (...args: unknown[]) => Promise<unknown>>;
  };
  // What one new proposal run evaluates when its workflow module is imported.
  runCache = new Map();
  temporal.importWorkflows();
  evaluated = [...runCache.keys()].map(String);
  // A registry run: the lazy import happens when the workflow function starts.
  registryRun = () => {
    runCache = new Map();
    const workflows = temporal.importWorkflows();
    // Outside a worker the registry fails once it touches the SDK's activator; its import has happened by then.
    workflows.circleRegistryWorkflow!({}).catch(() => undefined);
    vm.runInContext('0', context); // runs the context's queued microtasks (the lazy import)
    return [...runCache.keys()].map(String);
  };
}, 120_000);

describe('what a new proposal run evaluates', () => {
  it('the proposal workflow and the schemas it parses', () => {
    expect(has(evaluated, '/src/workflows/proposal/workflow.ts')).toBe(true);
    expect(has(evaluated, '/src/contracts/proposal.ts')).toBe(true);
  });

  it('no circle registry, no curve library, no signature verification', () => {
    expect(evaluated.filter((m) => m.includes('circle'))).toEqual([]);
    expect(evaluated.filter((m) => m.includes('@noble/curves'))).toEqual([]);
    expect(has(evaluated, '/src/identity/decision.ts')).toBe(false);
  });

  it('no schema the workflow never parses: policy, judge settings, the full proposal union', () => {
    expect(has(evaluated, '/src/contracts/policy.ts')).toBe(false);
    expect(has(evaluated, '/src/contracts/judge-settings.ts')).toBe(false);
    expect(has(evaluated, '/src/contracts/proposal-schema.ts')).toBe(false);
  });

  it('a circle registry run loads the registry when it starts', () => {
    const modules = registryRun();
    expect(has(modules, '/src/workflows/circle-registry.ts')).toBe(true);
  });
});
