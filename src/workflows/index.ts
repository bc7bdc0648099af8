/** Every workflow the workers run; the bundler starts here. Deterministic code only. */
export { proposalWorkflow } from './proposal';
export { circleRegistryWorkflow } from './circle-registry';
