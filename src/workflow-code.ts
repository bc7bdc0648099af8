/**
 * Where workflow code comes from, for a worker and for a replay (`audit replay`, src/audit): the sources, the options
 * every bundle of ours is made with, and the bundle the build ships. Its own module so that the audit layer, which
 * replays histories, does not import the worker.
 */
import { dirname, join } from 'node:path';
import type { WorkflowBundleOption } from '@temporalio/worker';
import { PACKAGE_ROOT, RUNNING_COMPILED } from './package-root';
import { workflowBundlerOptions } from './workflows/bundle-options';

/** The workflow sources: tests and benchmarks bundle them (`bundleWorkflowCode`), as does a worker run from src/. */
export const WORKFLOWS_PATH = join(PACKAGE_ROOT, 'src', 'workflows', 'index.ts');

/**
 * How every workflow bundle of ours is made: runs on one worker thread share the contracts they parse with instead of
 * evaluating zod and the schemas again per run (src/workflows/bundle-options.ts). Pass it to `bundleWorkflowCode`.
 */
export const WORKFLOW_BUNDLER_OPTIONS = workflowBundlerOptions(dirname(WORKFLOWS_PATH));

/** The workflow bundle `npm run build` makes from {@link WORKFLOWS_PATH}; the compiled package ships it. */
export const WORKFLOW_BUNDLE_PATH = join(PACKAGE_ROOT, 'dist', 'workflow-bundle.js');

/**
 * Where a worker or a replay gets its workflow code: the compiled package loads the bundle made at build time (the
 * SDK's production path: no bundling at start, no sources shipped); code run from src/ bundles the sources.
 */
export function defaultWorkflowCode():
  | { workflowBundle: WorkflowBundleOption }
  | { workflowsPath: string; bundlerOptions: typeof WORKFLOW_BUNDLER_OPTIONS } {
  return RUNNING_COMPILED
    ? { workflowBundle: { codePath: WORKFLOW_BUNDLE_PATH } }
    : { workflowsPath: WORKFLOWS_PATH, bundlerOptions: WORKFLOW_BUNDLER_OPTIONS };
}
