import type { CircleActivities } from './names';

/**
 * The registry's only activity: the operator keys of this deployment, read from the worker's
 * configuration (never from a client), recorded in history at the start of each run.
 */
export function createCircleActivities(deps: { operatorKeys: string[] }): CircleActivities {
  return {
    circleOperatorKeys() {
      return Promise.resolve(deps.operatorKeys);
    },
  };
}
