// Analytics routes: built by the analytics work (issue 4).
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../services.ts';

export const analyticsRoutes: FastifyPluginAsync<{ services: Services }> = async () => {};
