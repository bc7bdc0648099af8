import type { Command } from 'commander';
import { z } from 'zod';
import { ClarificationSchema, HumanDecisionSchema } from '../contracts/messages';
import { CompliancePolicySchema } from '../contracts/policy';
import { ProposalSchema } from '../contracts/proposal-schema';
import { VerdictSchema } from '../contracts/verdict';
import { BadInputError } from '../contracts/errors';
import { crdYaml } from './crd';
import { printJson } from './io';

/** The JSON Schemas users validate against, generated from the zod schemas (one source of truth). */
export const SCHEMAS = {
  proposal: ProposalSchema,
  verdict: VerdictSchema,
  policy: CompliancePolicySchema,
  clarification: ClarificationSchema,
  decision: HumanDecisionSchema,
} as const;

export function jsonSchemaOf(name: keyof typeof SCHEMAS): unknown {
  return z.toJSONSchema(SCHEMAS[name], { io: 'input', unrepresentable: 'any' });
}

export function registerSchemaCommand(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of a contract')
    .argument('<name>', `one of ${Object.keys(SCHEMAS).join('|')}, or crd (the CompliancePolicy CRD, YAML)`)
    .action((name: string) => {
      if (name === 'crd') {
        process.stdout.write(crdYaml());
        return;
      }
      if (!Object.prototype.hasOwnProperty.call(SCHEMAS, name)) {
        throw new BadInputError(
          `schema: unknown name ${JSON.stringify(name)}; expected one of ${Object.keys(SCHEMAS).join(', ')}`,
        );
      }
      printJson(jsonSchemaOf(name as keyof typeof SCHEMAS));
    });
}
