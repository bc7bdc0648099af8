#!/usr/bin/env node
/**
 * `npm run build`: src/ -> dist/, the compiled package.
 *
 * - JavaScript: esbuild, ESM with code splitting. Why esbuild directly: it is fast (well under a second here),
 *   actively maintained, already in the tree (tsx and vite use it), and splitting is what makes the CLI start fast:
 *   each command's dynamic import becomes its own chunk, so `--help` or `status` load only what they run. tsc alone
 *   does not work (its output keeps extensionless relative imports that Node's ESM loader refuses), and a
 *   single-file bundle is no faster than tsx. Dependencies stay external: they are the package's runtime
 *   `dependencies`, installed next to it, and one copy of each is shared by the CLI, the worker and library users
 *   (two copies of protobufjs or of the SDK's classes break replay and `instanceof`). The exception is
 *   {@link SELF_CONTAINED}: the modules `agent-judge status` runs have their dependencies bundled in, as one chunk
 *   instead of hundreds of module resolutions (see src/client/status-rpc.ts, and docs/bench.md for the figures).
 * - Type declarations: tsc (`tsconfig.build.json`, only what the public entry points reach), then relative
 *   specifiers are given their `.js` / `/index.js` so consumers with `moduleResolution: nodenext` resolve them.
 *   tsup would bundle the .d.ts files, but tsup is no longer maintained; tsc is the reference implementation.
 * - Workflows: `bundleWorkflowCode` at build time -> dist/workflow-bundle.js, which compiled workers load with
 *   `workflowBundle: { codePath }` (the SDK's production path: no webpack at worker start, no sources shipped), made
 *   with src/workflows/bundle-options.ts (compiled first, as an entry point, so this script and the worker share it).
 *
 * `--if-stale` skips the build when dist/ is newer than every input (the test setup uses it).
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const INPUTS = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'];
/** Public entry points; every module a command imports dynamically becomes a chunk of its own. */
const ENTRY_POINTS = [
  'src/cli/main.ts',
  'src/client/index.ts',
  'src/contracts/index.ts',
  'src/gate/index.ts',
  // The gate service from an agent's process (agent-judge/remote): fetch only, no Temporal.
  'src/gate/remote.ts',
  // The OpenAI Agents SDK adapter (agent-judge/openai-agents): imports @openai/agents as types only.
  'src/adapters/openai-agents.ts',
  // The Vercel AI SDK 7 adapter (agent-judge/ai-sdk): imports nothing of `ai` (its shapes are declared structurally).
  'src/adapters/ai-sdk.ts',
  // The LangChain adapter (agent-judge/langchain): imports only `langchain` (createMiddleware, the message classes).
  'src/adapters/langchain.ts',
  // The command hook: Node built-ins only, so one tool call's process loads one small file.
  'src/hooks/client.ts',
  // Also read by this script: how the workflow bundle below is made.
  'src/workflows/bundle-options.ts',
];
/**
 * The OpenClaw plugin, built on its own (no shared chunks: Node built-ins only), so dist/openclaw/ with
 * {@link OPENCLAW_PLUGIN_FILES} is the whole plugin and installs as a copy too.
 */
const OPENCLAW_PLUGIN_ENTRY = 'src/openclaw/plugin.ts';
/** Copied beside the built plugin: the folder `openclaw plugins install <dist/openclaw>` takes (docs/openclaw.md). */
const OPENCLAW_PLUGIN_FILES = ['src/openclaw/openclaw.plugin.json', 'src/openclaw/package.json'];
/**
 * Modules whose package imports are bundled into their chunk rather than left to Node: the `status` path. They hand
 * nothing built from those packages to other modules but plain data, so their private copies cannot mix with the
 * shared ones.
 */
const SELF_CONTAINED = ['src/client/status-rpc.ts', 'src/client/target.ts'].map((file) => join(ROOT, file));

/**
 * Packages never bundled, even for {@link SELF_CONTAINED} modules: grpc-js requires @grpc/proto-loader only to serve
 * channelz and ORCA, which the CLI never does, and bundling it would add a quarter of a megabyte to parse.
 */
const NEVER_BUNDLED = /^@grpc\/proto-loader(\/|$)/;

/** Package imports stay external, except from {@link SELF_CONTAINED} modules and from packages bundled for them. */
const dependencyPlacement = {
  name: 'dependency-placement',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const bundled =
        !NEVER_BUNDLED.test(args.path) &&
        (SELF_CONTAINED.includes(args.importer) || relative(ROOT, args.importer).split(sep).includes('node_modules'));
      return bundled ? undefined : { path: args.path, external: true };
    });
  },
};

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

function isStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return INPUTS.some((input) => newestMtime(join(ROOT, input)) > built);
}

function log(message) {
  process.stderr.write(`build: ${message}\n`);
}

async function buildJavaScript() {
  const { build } = await import('esbuild');
  await build({
    absWorkingDir: ROOT,
    entryPoints: ENTRY_POINTS,
    outdir: 'dist',
    outbase: 'src',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [dependencyPlacement],
    // Bundled CommonJS packages call `require` for Node's built-ins; ESM chunks have none of their own.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module';\nconst require = __createRequire(import.meta.url);",
    },
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: true,
    logLevel: 'warning',
  });
  await build({
    absWorkingDir: ROOT,
    entryPoints: [OPENCLAW_PLUGIN_ENTRY],
    outfile: 'dist/openclaw/plugin.js',
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    logLevel: 'warning',
  });
  for (const file of OPENCLAW_PLUGIN_FILES)
    copyFileSync(join(ROOT, file), join(DIST, 'openclaw', file.split('/').pop()));
}

async function buildWorkflowBundle() {
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error };
  // The same options as every other bundle of ours (runs share the schemas they parse with: across-runs.ts).
  const { workflowBundlerOptions } = await import(pathToFileURL(join(DIST, 'workflows/bundle-options.js')).href);
  const { code } = await bundleWorkflowCode({
    workflowsPath: join(ROOT, 'src/workflows/index.ts'),
    logger: quiet,
    ...workflowBundlerOptions(join(ROOT, 'src/workflows')),
  });
  writeFileSync(join(DIST, 'workflow-bundle.js'), code);
}

/** Every `.d.ts` below `dir`. */
function declarationFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarationFiles(path);
    return entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function buildDeclarations() {
  const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { stdio: 'inherit' });
  // `from './proposals'` -> `from './proposals.js'` (or `./circles/index.js`): Node's ESM resolution, which
  // `moduleResolution: nodenext` models, needs the full specifier in declaration files too.
  const typesDir = join(DIST, 'types');
  for (const file of declarationFiles(typesDir)) {
    const text = readFileSync(file, 'utf8');
    const fixed = text.replace(/((?:from|import\()\s*['"])(\.{1,2}\/[^'"]*)(['"])/g, (whole, head, spec, tail) => {
      if (/\.(js|json)$/.test(spec)) return whole;
      const target = resolve(dirname(file), spec);
      if (existsSync(`${target}.d.ts`)) return `${head}${spec}.js${tail}`;
      if (existsSync(join(target, 'index.d.ts'))) return `${head}${spec}/index.js${tail}`;
      throw new Error(`build: ${relative(ROOT, file)} imports ${spec}, which has no declaration file`);
    });
    if (fixed !== text) writeFileSync(file, fixed);
  }
}

if (process.argv.includes('--if-stale') && !isStale()) process.exit(0);
const started = performance.now();
rmSync(DIST, { recursive: true, force: true });
mkdirSync(DIST, { recursive: true });
await buildJavaScript();
log('JavaScript done');
await buildWorkflowBundle();
log('workflow bundle done');
buildDeclarations();
writeFileSync(STAMP, `${new Date().toISOString()}\n`);
log(`dist/ ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
