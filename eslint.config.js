// ESLint flat config: the rules STYLE.md asks for. typescript-eslint for type-aware rules,
// eslint-plugin-import-x for cycle detection.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { builtinModules } from 'node:module';

export default tseslint.config(
  { ignores: ['node_modules/**', '.agent-judge/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver': { typescript: true, node: true } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
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
    },
  },
);
