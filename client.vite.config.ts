// Bundles the typed client (src/client/index.ts) into one ES module, dist/client/index.js, with its
// two small browser-safe dependencies (eventsource-parser, p-retry) inside: it runs as it is in Node
// and in browsers, with no bundler or import map. Its declarations come from tsconfig.client.json.
import { defineConfig } from 'vite';

export default defineConfig({
  build: {
    lib: { entry: 'src/client/index.ts', formats: ['es'], fileName: () => 'index.js' },
    outDir: 'dist/client',
    emptyOutDir: false,
    target: 'es2022',
    minify: false,
    sourcemap: true,
  },
});
