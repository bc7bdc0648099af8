import type { z } from 'zod';

/**
 * One readable line per problem, each naming the field path and the rule it broke, e.g.
 * `proposal.parameters.command: expected array, received string`.
 */
export function describeIssues(root: string, issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = [root, ...issue.path.map(String)].filter(Boolean).join('.');
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}
