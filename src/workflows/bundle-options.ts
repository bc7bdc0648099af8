/**
 * How workflow bundles are made (`bundleWorkflowCode` / the worker's `bundlerOptions`): the options that let every
 * run on a worker thread share the schemas it parses with (see across-runs.ts and schemas.ts). A bundle made
 * without them works the same, slower: each run evaluates zod and the schemas again. Paths only, no workflow code;
 * `workflowsDir` is the absolute path of src/workflows (string joins: this folder may not import Node built-ins).
 */
export interface WorkflowBundlerOptions {
  preloadModules: string[];
  webpackConfigHook: <C extends { resolve?: { alias?: unknown } }>(config: C) => C;
}

export function workflowBundlerOptions(workflowsDir: string): WorkflowBundlerOptions {
  const dir = workflowsDir.replace(/[\\/]+$/, '');
  return {
    // Loaded before the first run: shared, and frozen by the SDK (it exports one function; its Map is not frozen).
    preloadModules: [`${dir}/across-runs.ts`],
    webpackConfigHook: (config) => {
      const resolve = config.resolve ?? {};
      const alias = (resolve.alias ?? {}) as Record<string, string>;
      // Matches `./schemas` from the workflow modules (resolved to this absolute path), not `./schemas.ts`.
      return {
        ...config,
        resolve: { ...resolve, alias: { ...alias, [`${dir}/schemas`]: `${dir}/schemas-across-runs.cjs` } },
      };
    },
  };
}
