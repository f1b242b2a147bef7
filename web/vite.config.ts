// Builds the dashboard into web/dist, which the Folio server serves at /. Every asset is local.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const root = fileURLToPath(new URL('.', import.meta.url));
// `vite --config web/vite.config.ts` (dev) proxies the API to a running Folio server.
const target = process.env.FOLIO_URL ?? 'http://127.0.0.1:8080';

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  publicDir: 'public',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1024,
  },
  server: {
    proxy: Object.fromEntries(['/api', '/v1', '/v2'].map((p) => [p, { target, changeOrigin: false }])),
  },
});
