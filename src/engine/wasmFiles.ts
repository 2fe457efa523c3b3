// tfjs-wasm fetches its .wasm files by name next to the script that runs it; in a bundled
// Worker they live under hashed asset URLs, so the backend is told where they are.
import wasmPlain from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm?url';
import wasmSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm?url';
import wasmThreadedSimd from '@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-threaded-simd.wasm?url';

export function wasmFilePaths(): Record<string, string> {
  return {
    'tfjs-backend-wasm.wasm': wasmPlain,
    'tfjs-backend-wasm-simd.wasm': wasmSimd,
    'tfjs-backend-wasm-threaded-simd.wasm': wasmThreadedSimd,
  };
}
