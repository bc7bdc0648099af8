/**
 * Issue 12: zod and the proposal schemas were most of a lightweight proposal's worker CPU, because the SDK evaluates a
 * workflow's modules afresh for every new run (reused V8 context). Our bundles preload src/workflows/across-runs.ts
 * and route the workflow's contracts through it, so only the first run on a worker thread evaluates them. This
 * evaluates bundles the way the SDK does (preload into the shared module cache, deep-freeze it, then one module cache
 * per run) and checks what the second and third runs evaluate: the production bundle (dist/, what `agent-judge
 * worker` and `dev` load) and a bundle made with WORKFLOW_BUNDLER_OPTIONS (tests, benchmarks, a worker run from src/).
 */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { bundleWorkflowCode } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { WORKFLOW_BUNDLE_PATH, WORKFLOW_BUNDLER_OPTIONS, WORKFLOWS_PATH } from '../../src/workflow-code';

/** The SDK's freeze of shared modules (reusable-vm.js `deepFreeze`): objects recursively, functions themselves. */
function deepFreeze(object: unknown, seen = new WeakSet<object>()): void {
  if (object === null || (typeof object !== 'object' && typeof object !== 'function')) return;
  if (seen.has(object) || Object.isFrozen(object)) return;
  seen.add(object);
  if (typeof object === 'object') {
    for (const key of [...Object.getOwnPropertyNames(object), ...Object.getOwnPropertySymbols(object)]) {
      try {
        deepFreeze((object as Record<string | symbol, unknown>)[key], seen);
      } catch {
        /* typed arrays cannot be frozen; the SDK skips them too */
      }
    }
  }
  Object.freeze(object);
}

/** The modules each of three consecutive runs evaluates when it imports the workflows, and what was shared. */
function runsOf(code: string): { shared: string[]; runs: string[][] } {
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
  vm.runInContext('__TEMPORAL__.preloadModules?.()', context);
  for (const module of shared.values()) deepFreeze(module);
  const runs: string[][] = [];
  for (let i = 0; i < 3; i++) {
    runCache = new Map();
    vm.runInContext('__TEMPORAL__.importWorkflows()', context);
    runs.push([...runCache.keys()].map(String));
  }
  return { shared: [...shared.keys()].map(String), runs };
}

const heavy = (modules: string[]) =>
  modules.filter(
    (m) =>
      m.includes('/zod/') ||
      m.includes('@noble/') ||
      m.endsWith('/src/contracts/proposal.ts') ||
      m.endsWith('/src/contracts/messages.ts'),
  );

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error: console.error };
let production: ReturnType<typeof runsOf>;
let fromSources: ReturnType<typeof runsOf>;

beforeAll(async () => {
  production = runsOf(readFileSync(WORKFLOW_BUNDLE_PATH, 'utf8'));
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: quiet,
    ...WORKFLOW_BUNDLER_OPTIONS,
  });
  fromSources = runsOf(code);
}, 120_000);

describe.each([
  ['the production bundle (dist/workflow-bundle.js)', () => production],
  ['a bundle made with WORKFLOW_BUNDLER_OPTIONS', () => fromSources],
])('%s', (_, bundle) => {
  it('the first run on a worker thread evaluates zod and the proposal schemas', () => {
    expect(heavy(bundle().runs[0]!)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/zod\//),
        expect.stringMatching(/src\/contracts\/proposal\.ts$/),
      ]),
    );
  });

  it('later runs evaluate no zod, no schema, no hash library: they reuse what the first run built', () => {
    expect(heavy(bundle().runs[1]!)).toEqual([]);
    expect(heavy(bundle().runs[2]!)).toEqual([]);
    // Still a fresh module cache per run for the workflow code itself (its state is per run).
    expect(bundle().runs[1]!.some((m) => m.endsWith('/src/workflows/proposal/workflow.ts'))).toBe(true);
  });

  it('nothing schema-bearing is preloaded, so nothing of zod is frozen', () => {
    expect(heavy(bundle().shared)).toEqual([]);
    expect(bundle().shared.some((m) => m.endsWith('/src/workflows/across-runs.ts'))).toBe(true);
  });
});
