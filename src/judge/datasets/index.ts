/**
 * The field's benchmarks `agent-judge eval --dataset` knows, read from where scripts/install-datasets.sh installs
 * them (`.agent-judge/tools/datasets`, or `--dataset-dir`).
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { BadInputError } from '../../contracts/errors';
import { AGENTDOJO_FILE, agentDojo } from './agentdojo';
import type { Dataset } from './dataset';
import { MIND2WEB_SC_FILE, mind2webSc } from './mind2web-sc';

export type { Dataset, PublishedFigure } from './dataset';
export { evenSample } from './dataset';

export const DATASETS = {
  'mind2web-sc': { file: MIND2WEB_SC_FILE, build: mind2webSc },
  agentdojo: { file: AGENTDOJO_FILE, build: agentDojo },
} as const;
export type DatasetName = keyof typeof DATASETS;

/** Where scripts/install-datasets.sh installs the data, relative to the working directory. */
export const DEFAULT_DATASET_DIR = '.agent-judge/tools/datasets';

export function isDatasetName(name: string): name is DatasetName {
  return Object.prototype.hasOwnProperty.call(DATASETS, name);
}

/** Reads a dataset; a missing install is bad input that says how to install it. */
export async function loadDataset(name: string, dir = DEFAULT_DATASET_DIR): Promise<Dataset> {
  if (!isDatasetName(name)) {
    throw new BadInputError(`eval: --dataset: unknown dataset "${name}" (known: ${Object.keys(DATASETS).join(', ')})`);
  }
  const path = resolve(join(dir, DATASETS[name].file));
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new BadInputError(
      `eval: --dataset ${name}: ${path} is missing; install it with scripts/install-datasets.sh ${name}`,
    );
  }
  return DATASETS[name].build(text, path);
}
