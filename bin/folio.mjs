#!/usr/bin/env node
// The `folio` command. Node 24 runs the TypeScript sources directly (type stripping); an older Node
// is told so in one sentence before it reads any of them (node-check.mjs, which every Node parses).
import { nodeVersionProblem } from './node-check.mjs';

const problem = nodeVersionProblem(process.versions.node);
if (problem) {
  process.stderr.write(`folio: ${problem}\n`);
  process.exit(1);
}
await import('../src/main.ts');
