#!/usr/bin/env node
// Entry point: the CLI is TypeScript run through tsx's loader, so `npm ci` needs no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
