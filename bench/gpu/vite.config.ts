// bench/webgpuRun.ts as one plain-Node ES module (.gpu/bundle/webgpuRun.mjs), for a machine
// with a GPU but no Node packages (bench/gpu/pack.sh): every dependency inlined, the shaders
// too (loadShader's ?raw glob); only Dawn's `webgpu` package stays outside, carried beside it.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  publicDir: false,
  ssr: { noExternal: true, external: ['webgpu'] },
  build: {
    ssr: fileURLToPath(new URL('../webgpuRun.ts', import.meta.url)),
    outDir: fileURLToPath(new URL('../../.gpu/bundle', import.meta.url)),
    emptyOutDir: true,
    target: 'node20',
    minify: false,
    rolldownOptions: { output: { format: 'es', entryFileNames: 'webgpuRun.mjs' } },
  },
});
