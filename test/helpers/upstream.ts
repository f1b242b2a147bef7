// The upstream service's wire contract, from test/fixtures/upstream-contract.json (written by
// scripts/upstream-contract.ts from its published OpenAPI documents): which statuses each operation
// declares and the shape of each body. Folio's answers are checked against it; unknown fields pass.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Shape } from '../../scripts/upstream-contract.ts';
import { ROOT } from './process.ts';

interface Contract {
  operations: Record<string, Record<string, string>>;
  shapes: Record<string, Shape>;
}

const contract = JSON.parse(readFileSync(path.join(ROOT, 'test/fixtures/upstream-contract.json'), 'utf8')) as Contract;

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function formatOk(format: string, value: string): boolean {
  if (format === 'date-time') return DATE_TIME.test(value) && !Number.isNaN(Date.parse(value));
  if (format === 'uri') return URL.canParse(value);
  return true;
}

/**
 * The problems of `value` against `shape` (empty when it conforms). `allFields` also requires every
 * field the shape names, for bodies whose fields the seed lists although the document marks none required.
 */
export function shapeProblems(shape: Shape, value: unknown, opts: { allFields?: boolean } = {}, at = ''): string[] {
  const where = at || '/';
  if (value === null) return shape.nullable ? [] : [`${where} is null`];
  const problems: string[] = [];
  switch (shape.type) {
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) return [`${where} is not an object`];
      const obj = value as Record<string, unknown>;
      const required = opts.allFields ? Object.keys(shape.fields ?? {}) : (shape.required ?? []);
      for (const name of required) if (!(name in obj)) problems.push(`${at}/${name} is missing`);
      for (const [name, field] of Object.entries(shape.fields ?? {})) {
        if (name in obj) problems.push(...shapeProblems(field, obj[name], opts, `${at}/${name}`));
      }
      return problems;
    }
    case 'array':
      if (!Array.isArray(value)) return [`${where} is not an array`];
      return value.flatMap((item, i) => shapeProblems(shape.items!, item, opts, `${at}/${i}`));
    case 'string':
      if (typeof value !== 'string') return [`${where} is not a string`];
      if (shape.enum && !shape.enum.includes(value)) problems.push(`${where} is "${value}", not one of ${shape.enum.join(', ')}`);
      if (shape.format && !formatOk(shape.format, value)) problems.push(`${where} is not a ${shape.format}`);
      return problems;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? [] : [`${where} is not a number`];
    case 'integer':
      return Number.isInteger(value) ? [] : [`${where} is not an integer`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${where} is not a boolean`];
  }
}

/** A validator for one of the contract's shapes: null when the value conforms, else the problems. */
export function upstreamValidator(shapeName: string, opts: { allFields?: boolean } = {}): (value: unknown) => string | null {
  const shape = contract.shapes[shapeName];
  if (!shape) throw new Error(`The upstream contract has no shape "${shapeName}".`);
  return (value) => {
    const problems = shapeProblems(shape, value, opts);
    return problems.length === 0 ? null : problems.join('; ');
  };
}

/**
 * The problems of an answer to an upstream operation ("POST /v2/agent/{projectId}/job"): the status
 * must be one the operation declares, and the body must have its shape.
 */
export function operationProblems(operation: string, status: number, body: unknown, opts: { allFields?: boolean } = {}): string | null {
  const statuses = contract.operations[operation];
  if (!statuses) throw new Error(`The upstream contract has no operation "${operation}".`);
  const shapeName = statuses[String(status)];
  if (!shapeName) return `${operation} does not declare ${status} (it declares ${Object.keys(statuses).join(', ')})`;
  return upstreamValidator(shapeName, opts)(body);
}
