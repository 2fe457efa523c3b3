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
  const gpu = mod.create(dawnFlags(process.env.VK_ICD_FILENAMES ?? ''));
  g.__gpu = gpu; // Dawn crashes at random if the gpu object is garbage-collected.
  if (!g.navigator) {
    Object.defineProperty(globalThis, 'navigator', { value: { gpu }, configurable: true });
  } else if (!g.navigator.gpu) {
    Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true });
  }
  return gpu;
}

/**
 * Dawn's flags for the Vulkan driver in use. On SwiftShader, Dawn's default zero-fill of
 * workgroup memory through the Vulkan extension made the driver compile every element's store:
 * the decode kernel's pipeline took ~7 s of the self-check's ~11. Without the extension Dawn
 * zero-fills in the shader itself (Tint's loop), the same WebGPU semantics, compiled in ~1 s.
 */
export function dawnFlags(icd: string): string[] {
  return /swiftshader/i.test(icd)
    ? ['disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension']
    : [];
}
