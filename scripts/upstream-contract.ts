// Writes test/fixtures/upstream-contract.json: the facts Folio's upstream-compatibility tests check
// (operations, status codes, and for each response body its field names, types, formats, enums,
// required and nullable), taken from the hosted service's published OpenAPI documents. The tests read
// only the fixture, so they pass on a machine that has nothing beside the repository.
//   node scripts/upstream-contract.ts <folder with admin-openapi.json and analytics.openapi.json>
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** The operations the seed names, as "METHOD /path" of the upstream documents. */
const OPERATIONS: Record<string, string[]> = {
  'admin-openapi.json': ['POST /v2/agent/{projectId}/job', 'GET /v2/agent/{projectId}/job/{id}', 'POST /v2/agent/{projectId}/job/{id}/message'],
  'analytics.openapi.json': ['GET /v1/analytics/{projectId}/visitors', 'GET /v1/analytics/{projectId}/views'],
};

export interface Shape {
  type: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';
  nullable?: boolean;
  format?: string;
  enum?: string[];
  /** Objects: their fields; names listed in `required` must be present. */
  fields?: Record<string, Shape>;
  required?: string[];
  /** Arrays: the shape of every item. */
  items?: Shape;
}

type Schema = Record<string, any>;

function resolve(doc: Schema, s: Schema): Schema {
  if (s.$ref) return resolve(doc, s.$ref.replace('#/', '').split('/').reduce((o: Schema, k: string) => o[k], doc));
  return s;
}

function shapeOf(doc: Schema, raw: Schema): Shape {
  const s = resolve(doc, raw);
  // OpenAPI 3.1 spells nullable as a type list.
  const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
  const type = types.find((t) => t !== 'null') as Shape['type'];
  const out: Shape = { type };
  if (s.nullable === true || types.includes('null')) out.nullable = true;
  if (s.format) out.format = s.format;
  if (s.enum) out.enum = s.enum;
  if (type === 'object') {
    out.fields = Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, shapeOf(doc, v as Schema)]));
    if (s.required?.length) out.required = s.required;
  }
  if (type === 'array') out.items = shapeOf(doc, s.items);
  return out;
}

function main(dir: string): void {
  const operations: Record<string, Record<string, string>> = {};
  const shapes: Record<string, Shape> = {};
  for (const [file, ops] of Object.entries(OPERATIONS)) {
    const doc = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    for (const op of ops) {
      const [method, p] = op.split(' ');
      const responses = doc.paths[p][method.toLowerCase()].responses as Record<string, Schema>;
      operations[op] = {};
      for (const [status, response] of Object.entries(responses)) {
        const schema = response.content?.['application/json']?.schema;
        if (!schema?.$ref) continue;
        const name = (schema.$ref as string).split('/').pop()!;
        operations[op][status] = name;
        shapes[name] ??= shapeOf(doc, schema);
      }
    }
  }
  const fixture = {
    about:
      'Facts of the hosted service\'s published OpenAPI documents (admin-openapi.json, analytics.openapi.json) for the operations the seed names. ' +
      'Written by scripts/upstream-contract.ts from those documents; regenerate it when they change. Folio\'s answers must satisfy these shapes (unknown fields are allowed).',
    operations,
    shapes,
  };
  const out = path.resolve(import.meta.dirname, '../test/fixtures/upstream-contract.json');
  writeFileSync(out, JSON.stringify(fixture, null, 2) + '\n');
  process.stdout.write(`Wrote ${out}: ${Object.keys(operations).length} operations, ${Object.keys(shapes).length} shapes.\n`);
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: node scripts/upstream-contract.ts <folder with the upstream OpenAPI documents>\n');
  process.exit(2);
}
main(dir);
