/**
 * A real OpenAI-compatible server for tests and benches: llama.cpp's own server from the `xllamacpp` wheel (PyPI),
 * which the test setup installs under `.agent-judge/tools/xllamacpp` (scripts/test-tools.mjs), serving the 270M test
 * GGUF on a free loopback port.
 * `scripts/llama-server.py` runs it; the server stops when this process closes its standard input or kills it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/devserver/server';

/** `AGENT_JUDGE_TEST_XLLAMACPP`, else `.agent-judge/tools/xllamacpp` in the repository. */
export const XLLAMACPP_DIR =
  process.env.AGENT_JUDGE_TEST_XLLAMACPP ??
  fileURLToPath(new URL('../../.agent-judge/tools/xllamacpp', import.meta.url));

const SCRIPT = fileURLToPath(new URL('../../scripts/llama-server.py', import.meta.url));

/** The pinned wheel, installed the way `.ci/run` does it. */
export const XLLAMACPP_VERSION = '2026.10.11549';
export const HOW_TO_GET_XLLAMACPP =
  'python3 -m pip install --target .agent-judge/tools/xllamacpp ' +
  `xllamacpp==${XLLAMACPP_VERSION} (or node scripts/test-tools.mjs)`;

export function xllamacppPresent(): boolean {
  return existsSync(`${XLLAMACPP_DIR}/xllamacpp`);
}

export interface LlamaServer {
  /** `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** The model name the server answers to. */
  model: string;
  threads: number;
  /** What the server wrote on stderr (llama.cpp's log), for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts the server and waits (up to `readyTimeoutMs`) until it lists the model: loading the 270M GGUF takes a few
 * seconds idle, longer on a loaded machine.
 */
export async function startLlamaServer(options: {
  gguf: string;
  threads?: number;
  alias?: string;
  contextSize?: number;
  readyTimeoutMs?: number;
  /** Where the xllamacpp wheel is installed (default {@link XLLAMACPP_DIR}). */
  dir?: string;
}): Promise<LlamaServer> {
  const port = await freePort();
  const model = options.alias ?? 'gemma3-270m';
  const threads = options.threads ?? 1;
  const child: ChildProcess = spawn(
    'python3',
    [
      SCRIPT,
      '--site',
      options.dir ?? XLLAMACPP_DIR,
      '--model',
      options.gguf,
      '--port',
      String(port),
      '--threads',
      String(threads),
      '--alias',
      model,
      '--ctx',
      String(options.contextSize ?? 4096),
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (c: Buffer) => {
    log = (log + c.toString('utf8')).slice(-8000);
  });
  child.stdout?.resume();
  const state: { exited: string | null } = { exited: null };
  child.on('exit', (code, signal) => {
    state.exited = `exited with ${signal ?? code}`;
  });
  const baseUrl = `http://127.0.0.1:${port}/v1`;
  const stop = async () => {
    if (state.exited !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin?.end();
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await gone;
    clearTimeout(t);
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 180_000);
  for (;;) {
    if (state.exited !== null) throw new Error(`llama.cpp server ${state.exited}: ${log.slice(-2000)}`);
    try {
      const res = await fetch(`${baseUrl}/models`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) {
        const body = (await res.json()) as { data?: Array<{ id: string }> };
        if (body.data?.some((m) => m.id === model)) break;
      } else {
        await res.body?.cancel();
      }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`llama.cpp server did not list ${model} within the ready timeout: ${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { baseUrl, model, threads, log: () => log, stop };
}
