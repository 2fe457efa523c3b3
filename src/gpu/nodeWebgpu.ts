// Node only: give tfjs-backend-webgpu a navigator.gpu from the `webgpu` package (Dawn).
// Loaded with a dynamic import so browser bundles never see it.

const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

export async function installNodeWebgpu(): Promise<GPU | null> {
  const g = globalThis as unknown as {
    navigator?: { gpu?: GPU };
    __gpu?: GPU;
  };
  if (g.navigator?.gpu) return g.navigator.gpu;
  const fsName = 'node:fs'; // a variable specifier keeps browser bundlers away from it
  const { existsSync } = (await import(/* @vite-ignore */ fsName)) as typeof import('node:fs');
  // CPU-only machines: Dawn over SwiftShader's Vulkan, shipped with Debian's chromium.
  if (!process.env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) {
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
  process.env.XDG_RUNTIME_DIR ??= '/tmp';
  let mod: { create: (flags: string[]) => GPU; globals: Record<string, unknown> };
  try {
    const name = 'webgpu';
    mod = await import(/* @vite-ignore */ name);
  } catch {
    return null;
  }
  Object.assign(globalThis, mod.globals);
  const gpu = mod.create([]);
  g.__gpu = gpu; // Dawn crashes at random if the gpu object is garbage-collected.
  if (!g.navigator) {
    Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
  } else if (!g.navigator.gpu) {
    Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true });
  }
  return gpu;
}
