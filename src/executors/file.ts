import { constants } from 'node:fs';
import { mkdir, open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ExecutionRefusedError } from '../contracts/errors';
import { confine, isInside, realPath } from '../guards/paths';
import { proposalFor, type Executor } from './types';

/**
 * file_write, confined to the policy's roots. The path is resolved again here (symlinks may have
 * changed since the judge looked) and the final component is opened with O_NOFOLLOW.
 */
export const fileExecutor: Executor = {
  name: 'file',
  idempotent: true,
  /**
   * The target already holds the intended content (create, overwrite), or ends with it (append):
   * the earlier attempt wrote it. An append whose file already ended with the same text before is
   * indistinguishable, and is confirmed too (the file holds what was asked either way).
   */
  async confirm(ctx) {
    const { target, parameters } = proposalFor(ctx, 'file_write');
    const confined = confine(target.path, ctx.policy.spec.files.roots, ctx.baseDir);
    if (!confined) return null;
    let text: string;
    try {
      // O_NOFOLLOW: never read through a symlink the target was swapped for.
      const handle = await open(confined.real, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        text = await readFile(handle, 'utf8');
      } finally {
        await handle.close();
      }
    } catch {
      return null;
    }
    const holds = parameters.mode === 'append' ? text.endsWith(parameters.content) : text === parameters.content;
    if (!holds) return null;
    return {
      ok: true,
      output: {
        path: confined.real,
        bytes: Buffer.byteLength(parameters.content),
        mode: parameters.mode,
        confirmed: true,
      },
    };
  },
  async run(ctx) {
    const { target, parameters } = proposalFor(ctx, 'file_write');
    const roots = ctx.policy.spec.files.roots;
    const confined = confine(target.path, roots, ctx.baseDir);
    if (!confined)
      throw new ExecutionRefusedError(`path ${JSON.stringify(target.path)} resolves outside the allowed roots`);
    const only = ctx.verdict.constraints.files_only;
    if (only && !only.some((f) => isInside(confined.real, realPath(f, ctx.baseDir)))) {
      throw new ExecutionRefusedError(
        `path ${JSON.stringify(target.path)} is outside the verdict's files_only constraint`,
      );
    }
    await mkdir(dirname(confined.real), { recursive: true });
    // The directory may have been swapped for a symlink between the check and mkdir: check again.
    if (!confine(dirname(confined.real), [confined.root], ctx.baseDir)) {
      throw new ExecutionRefusedError(`parent of ${JSON.stringify(target.path)} moved outside the allowed roots`);
    }
    const flags =
      constants.O_WRONLY |
      constants.O_NOFOLLOW |
      (parameters.mode === 'append'
        ? constants.O_CREAT | constants.O_APPEND
        : parameters.mode === 'overwrite'
          ? constants.O_CREAT | constants.O_TRUNC
          : constants.O_CREAT | constants.O_EXCL);
    let handle;
    try {
      handle = await open(confined.real, flags, 0o644);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST')
        return { ok: false, error: `${target.path} already exists (mode create); use mode overwrite or append` };
      if (code === 'ELOOP') throw new ExecutionRefusedError(`${target.path} is a symlink; refusing to follow it`);
      throw err;
    }
    try {
      await handle.writeFile(parameters.content, 'utf8');
    } finally {
      await handle.close();
    }
    return {
      ok: true,
      output: { path: confined.real, bytes: Buffer.byteLength(parameters.content), mode: parameters.mode },
    };
  },
};
