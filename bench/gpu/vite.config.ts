// The GPU bundle's two entries as plain-Node ES modules in .gpu/bundle, for a machine with a GPU
// but no Node packages (bench/gpu/pack.sh): webgpuRun.mjs (bench/webgpuRun.ts, the GPT-2 presets
// on the kernels and tfjs-webgpu) and gpuSections.mjs (bench/gpu/sections.ts, the Llama-family
// sections at the 0.5B shape). Every dependency inlined, the shaders too (loadShader's ?raw
// glob), code both use in a shared chunk; only Dawn's `webgpu` package stays outside, carried
// beside them.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('../..'),
  publicDir: false,
  ssr: { noExternal: true, external: ['webgpu'] },
  build: {
    ssr: true,
    outDir: here('../../.gpu/bundle'),
    emptyOutDir: true,
    target: 'node20',
    minify: false,
    rolldownOptions: {
      input: { webgpuRun: here('../webgpuRun.ts'), gpuSections: here('./sections.ts') },
      // .mjs throughout: ES modules whatever package.json sits above the bundle.
      output: { format: 'es', entryFileNames: '[name].mjs', chunkFileNames: '[name]-[hash].mjs' },
    },
  },
});
