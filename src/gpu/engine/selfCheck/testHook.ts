// Test only: WGSL text that replaces a shader's source in the next engine's runtime (a kernel
// with a missing barrier or an off-by-one), so a test can see the self-check catch it. Nothing
// shipped sets it; shaders/ holds only the real kernels.
let overrides: Record<string, string> = {};

/** Replaces `shaders/NAME.wgsl` (by file name) with the given text for engines started next. */
export function setShaderOverridesForTest(sources: Record<string, string>): void {
  overrides = { ...sources };
}

export function shaderOverridesForTest(): Readonly<Record<string, string>> {
  return overrides;
}
