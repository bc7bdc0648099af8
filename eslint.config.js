// ESLint flat config: the rules CONTRIBUTING.md asks for. typescript-eslint's type-checked rules,
// eslint-plugin-import-x for cycle detection and the layer zones.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { builtinModules } from 'node:module';

/**
 * Layers point down: contracts < config, identity, names < guards < policy < judge, executors, escalation,
 * circles, metrics, devserver < workflows < activities < client < gate < the runtimes (mcp, hooks, adapters)
 * < worker, audit < cli. Each zone forbids the imports that would point up (or sideways into a layer a
 * module must not know); every folder of src/ has one (CONTRIBUTING.md: how to add a folder).
 */
const layerZones = [
  {
    target: './src/contracts',
    from: './src',
    except: ['./contracts'],
    message: 'contracts import nothing of ours outside contracts (zod and @noble/* are fine).',
  },
  {
    target: './src/config',
    from: './src',
    except: ['./contracts', './config'],
    message: 'the environment schema sits just above contracts: it imports only contracts.',
  },
  {
    target: './src/identity',
    from: './src',
    except: ['./contracts', './identity'],
    message: 'identity sits below circles, escalation and the client: it imports only contracts.',
  },
  {
    target: './src/guards',
    from: './src',
    except: ['./contracts', './guards', './policy'],
    message: 'guards are shared by the judge and the executors: they import only contracts (and policy types).',
  },
  {
    target: './src/policy',
    from: './src',
    except: ['./contracts', './config', './guards', './policy', './package-root.ts'],
    message: 'policy sits below the judge and the executors: it imports only contracts, config and guards.',
  },
  {
    target: './src/executors',
    from: [
      './src/judge',
      './src/workflows',
      './src/activities',
      './src/client',
      './src/worker',
      './src/cli',
      './src/audit',
      './src/a2a',
      './src/inbox',
    ],
    message: 'executors never import the judge (shared checks live in src/guards) or anything above them.',
  },
  {
    target: './src/gate',
    from: [
      './src/worker',
      './src/activities',
      './src/cli',
      './src/mcp',
      './src/audit',
      './src/judge',
      './src/executors',
      './src/a2a',
      './src/inbox',
    ],
    message:
      'the gate serves every runtime: it sits on the client and contracts, never on a runtime (mcp) or a worker.',
  },
  {
    target: './src/circles',
    from: './src',
    except: ['./contracts', './identity', './circles', './wire-names.ts'],
    message: 'circles are pure trust-circle logic: they import only contracts, identity and the wire names.',
  },
  {
    target: './src/escalation',
    from: './src',
    except: ['./contracts', './identity', './names.ts', './escalation'],
    message: 'escalation channels import only contracts, identity and names: the worker wires them to Temporal.',
  },
  {
    target: './src/judge',
    from: './src',
    except: ['./contracts', './guards', './policy', './package-root.ts', './judge'],
    message:
      'the judge holds no executor credentials and knows no runtime: it imports only contracts, guards and policy.',
  },
  {
    target: './src/metrics',
    from: './src',
    except: ['./contracts', './names.ts', './metrics'],
    message: 'metrics import only contracts and names: every process (worker, proxy, CLI) uses them.',
  },
  {
    target: './src/devserver',
    from: './src',
    except: ['./contracts', './config', './names.ts', './devserver'],
    message: 'the embedded Temporal server knows nothing of agent-judge above contracts, config and names.',
  },
  {
    target: './src/activities',
    from: [
      './src/client',
      './src/worker',
      './src/cli',
      './src/mcp',
      './src/hooks',
      './src/adapters',
      './src/gate',
      './src/devserver',
    ],
    message: 'activities run in the worker: they never import a runtime, the client, the worker or the CLI.',
  },
  {
    target: './src/mcp',
    from: [
      './src/worker',
      './src/activities',
      './src/workflows',
      './src/cli',
      './src/hooks',
      './src/adapters',
      './src/executors',
      './src/judge',
    ],
    message: 'the MCP proxy is one runtime on the gate: it never imports another runtime, the worker or the CLI.',
  },
  {
    target: './src/hooks',
    from: [
      './src/worker',
      './src/activities',
      './src/workflows',
      './src/cli',
      './src/mcp',
      './src/adapters',
      './src/executors',
      './src/judge',
    ],
    message:
      'the coding-agent hooks are one runtime on the gate: they never import another runtime, the worker or the CLI.',
  },
  {
    target: './src/adapters',
    from: './src',
    except: ['./contracts', './gate', './adapters'],
    message: 'framework adapters sit on the gate alone (its service client and the texts the model reads).',
  },
  {
    target: './src/a2a',
    from: './src',
    except: ['./contracts', './identity', './circles', './client', './a2a'],
    message: 'the A2A front sits on the circle registry client: it imports only contracts, identity, circles, client.',
  },
  {
    target: './src/inbox',
    from: './src',
    except: ['./contracts', './identity', './escalation', './client', './names.ts', './inbox'],
    message:
      'the web inbox is a runtime on the client: it imports only contracts, identity, escalation texts and the client.',
  },
  {
    target: './src/worker',
    from: ['./src/cli', './src/mcp', './src/hooks', './src/adapters', './src/gate', './src/devserver'],
    message: 'the worker hosts workflows and activities: it never imports a runtime or the CLI.',
  },
  {
    target: './src/audit',
    from: ['./src/cli', './src/mcp', './src/hooks', './src/adapters', './src/gate', './src/worker'],
    message: 'audit reads histories and logs: it never imports a runtime, the worker or the CLI.',
  },
  {
    target: ['./src/!(cli)/**/*', './src/*.ts'],
    from: './src/cli',
    message: 'nothing imports the CLI: it is the top of the tree.',
  },
  {
    target: './src/client',
    from: ['./src/worker', './src/activities', './src/cli', './src/a2a', './src/inbox'],
    message: 'the client is a library for actor runtimes: it never imports the worker, activities or the CLI.',
  },
  {
    // Workflow code is replayed: only deterministic, pure modules. Activities come in as types
    // (checked by @typescript-eslint/no-restricted-imports below, which can tell type imports apart).
    target: './src/workflows',
    from: './src',
    except: [
      './contracts',
      './policy',
      './names.ts',
      './circles/names.ts',
      './circles/state',
      './circles/policy.ts',
      './circles/schemas.ts',
      './circles/statements.ts',
      './circles/operator.ts',
      './identity/verify.ts',
      './identity/decision.ts',
      './identity/grant.ts',
      './identity/review-mark.ts',
      './identity/nonces.ts',
      './workflows',
      './activities',
    ],
    message:
      'workflows import only contracts, policy, names and pure helpers (circles state/policy/schemas, identity verify).',
  },
  {
    target: './src/workflows',
    from: './src/policy/load.ts',
    message: 'policy/load reads files: workflows get the policy as an argument.',
  },
  {
    target: './src/workflows',
    from: './src/policy/layers.ts',
    message: 'policy/layers reads files: workflows get the policy as an argument.',
  },
];

/** Imports allowed as types only, per folder (no-restricted-paths cannot tell `import type` apart). */
const typeOnly = (folder, why) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    { patterns: [{ regex: `^(\\.\\./)+${folder}(/|$)`, allowTypeImports: true, message: why }] },
  ],
});

export default tseslint.config(
  { ignores: ['node_modules/**', '.agent-judge/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.ts', '**/*.js'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver': { typescript: true, node: true } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
      'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: layerZones }],
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Prettier (printWidth 120) cannot split strings or comments; this catches what it leaves.
      'max-len': ['error', { code: 120, ignoreUrls: true }],
    },
  },
  {
    files: ['src/guards/**/*.ts'],
    rules: typeOnly('policy', 'guards may use policy types only; the policy layer imports guards.'),
  },
  {
    // Workflow code must be deterministic: no Node built-ins, no network clients.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...builtinModules.flatMap((m) => [m, `node:${m}`]),
            'ollama',
            'discord.js',
            '@temporalio/client',
            '@temporalio/worker',
            '@temporalio/activity',
          ],
        },
      ],
      ...typeOnly('activities', 'workflows import activities as types only (proxyActivities<Activities>).'),
    },
  },
);
