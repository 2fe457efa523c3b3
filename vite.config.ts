import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  plugins: [react()],
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    chunkSizeWarningLimit: 8000,
    // index.html is the lab; chart-bench.html is the chart benchmark (npm run bench -- charts).
    rolldownOptions: {
      input: {
        main: fileURLToPath(new URL('./index.html', import.meta.url)),
        chartBench: fileURLToPath(new URL('./chart-bench.html', import.meta.url)),
      },
    },
  },
  optimizeDeps: { exclude: ['quickjs-emscripten'] },
});
