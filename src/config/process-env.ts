/**
 * The process's environment, read here and nowhere else in `src/`. A command validates it once with `loadEnv`
 * (src/config/env.ts) and passes the result down; the raw form is for what the schema cannot list (the variable a
 * policy names for a token, such as `spec.judge.forgejo.tokenEnv`) and for libraries that read variables themselves
 * (the Temporal SDK's envconfig, the notifiers). This module imports nothing, so the fast `status` path loads nothing
 * for it.
 */
export function processEnv(): NodeJS.ProcessEnv {
  return process.env;
}
