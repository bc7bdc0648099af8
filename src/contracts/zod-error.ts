import type { z } from 'zod';

/**
 * One readable line per problem, each naming the field path and the rule it broke, e.g.
 * `proposal.parameters.command: expected array, received string`.
 */
export function describeIssues(root: string, issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => {
      const path = [root, ...issue.path.map(String)].filter(Boolean).join('.');
      // An issue at the root of an unnamed document (a policy file that is not a mapping) has no path.
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
