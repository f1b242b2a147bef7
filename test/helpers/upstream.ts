// The upstream OpenAPI documents live in shared/ beside the repository (reference data, not copied in).
import path from 'node:path';
import { ROOT } from './process.ts';

export const UPSTREAM_DIR = path.resolve(ROOT, '../shared/reference/upstream-openapi');
export const UPSTREAM_ADMIN = path.join(UPSTREAM_DIR, 'admin-openapi.json');
export const UPSTREAM_ANALYTICS = path.join(UPSTREAM_DIR, 'analytics.openapi.json');
