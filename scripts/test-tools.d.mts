/** Types for scripts/test-tools.mjs (a plain script shared with .ci/run). */
export declare const TOOLS_DIR: string;
export declare const REAL_MODEL_FILE: string;
export declare const REAL_MODEL_PACKAGE: string;
export declare function toolSearchPath(env?: NodeJS.ProcessEnv): string;
export declare function findOnPath(name: string, searchPath?: string): string | null;
export declare function ensureNode22Tools(log?: (line: string) => void): {
  node22: string;
  inspector: string;
  conformance: string;
  chromiumPackage: string;
  aiSdk: string;
};
export declare function ensureCodex(log?: (line: string) => void): string;
export declare const NODE24_PACKAGE: string;
export declare const NODE24_PATH: string;
export declare function ensureNode24(log?: (line: string) => void): string;
export declare function ensureOpenClaw(log?: (line: string) => void): { node24: string; openclaw: string };
export declare function ensureChromium(chromiumPackage: string, log?: (line: string) => void): Promise<string>;
export declare function ensurePrometheus(log?: (line: string) => void): { promtool: string; prometheus: string };
export declare function ensureStrace(log?: (line: string) => void): { strace: string };
export declare function ensureRgTree(log?: (line: string) => void): { rg: string; tree: string };
export declare function ensureRealModel(log?: (line: string) => void): string;
export declare const XLLAMACPP_VERSION: string;
export declare const XLLAMACPP_DIR: string;
export declare const DATASETS_DIR: string;
export declare function ensureXllamacpp(log?: (line: string) => void): string;
export declare function ensureDatasets(log?: (line: string) => void): string;
export declare const PYTHON_VENV: string;
export declare const PYTHON_EXTRAS: string;
export declare const PYTHON_CREWAI_VENV: string;
/** The Python package's venv (python/ installed editable with its frameworks and pytest); returns its python. */
export declare function ensurePythonPackage(
  log?: (line: string) => void,
  options?: { venv?: string; constraintsFile?: string; extras?: string },
): string;
/** The tools the tests drive, by name: where each is. */
export interface TestTools {
  node22?: string;
  inspector?: string;
  conformance?: string;
  chromium?: string;
  /** The `ai` package (AI SDK 7) installed for Node 22, for the agent-judge/ai-sdk tests. */
  aiSdk?: string;
  /** The Codex CLI's native binary (test/tools/codex). */
  codex?: string;
  /** Node 24 and OpenClaw's CLI (`openclaw.mjs`), for the OpenClaw plugin's end-to-end test. */
  node24?: string;
  openclaw?: string;
  promtool?: string;
  prometheus?: string;
  realModel?: string;
  xllamacpp?: string;
  datasets?: string;
  /** strace, rg and tree for the shell gate's differential test (test/security/shell-differential.test.ts). */
  strace?: string;
  rg?: string;
  tree?: string;
  /** The venv's python with the Python package (python/), its adapters' frameworks and pytest. */
  python?: string;
  /** CrewAI's own venv's python (python/ with `crewai` and pytest; python/constraints-crewai.txt). */
  pythonCrewai?: string;
}
export declare function ensureTestTools(
  log?: (line: string) => void,
): Promise<{ tools: TestTools; missing: Partial<Record<keyof TestTools, string>> }>;
