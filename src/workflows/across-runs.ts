/**
 * Values a worker thread builds once and every workflow run on it reuses (issue 12). The SDK evaluates a workflow's
 * modules afresh for every new run, and only modules loaded before the first run are shared; this module is one of
 * those ({@link workflowBundlerOptions} preloads it). The SDK deep-freezes what shared modules export, which zod's
 * schemas cannot survive (they cache parsers on themselves), so nothing built here is exported: the loaded values
 * live in this module's closure, out of the freeze's reach, and reach runs through {@link acrossRuns}.
 *
 * Only pure, deterministic values belong here (schemas, parsers, pure functions): a run must not be able to tell
 * whether it built a value or was handed one another run built. Never workflow state, never anything that reads
 * the workflow's context (time, random, info) when it is built.
 */
const values = new Map<string, unknown>();

/** The value `key` names: built by `load` in the first run that asks, the same object for every later run. */
export function acrossRuns<T>(key: string, load: () => T): T {
  if (values.has(key)) return values.get(key) as T;
  const value = load();
  values.set(key, value);
  return value;
}
