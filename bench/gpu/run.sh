#!/usr/bin/env bash
# On a machine with a real GPU (the device tool), over the .gpu/ that bench/gpu/pack.sh made, in
# plain Node with Dawn on the GPU's Vulkan driver. Parts, as arguments (default all, in this
# order; the Llama ones first, as they print their tables only at their end):
#   llama       `npm run bench -- llama`: the Llama-family kernels at Qwen2.5-Coder-0.5B's sizes,
#               then a random BF16 checkpoint of its shape on them (load, prefill, decode tok/s)
#   llama-lora  `npm run bench -- llama-lora`: a LoRA forward + backward at that shape
#               (LLAMA_LORA_T × LLAMA_LORA_B tokens, default 8 × 1, the batch of the README's estimate)
#   peers       the lab's kernel rows of `npm run bench -- peers` (bench/peersLab.ts: SmolLM2-135M's
#               and Qwen2.5-0.5B's shapes, prompt, decode and a GRPO group's rows; PEERS_* as
#               there); llama.cpp's side runs in a browser page, which this bundle cannot carry
#   webgpu      the lab's kernels and tfjs-webgpu on each GPT-2 preset (BENCH_PRESETS, BENCH_VARIANTS)
# LLAMA_BENCH_LAYERS (default 24) cuts the Llama sections' depth. The parts share one deadline,
# GPU_BENCH_SECONDS (default 540) from the start, inside the device call's 600 s: a part with
# under 20 s left is skipped, one cut short says so. Writes $OUT/log.txt (everything),
# $OUT/llama.txt (the Llama sections' tables) and $OUT/rows.txt (webgpu's WEBGPU_ lines, for
# WEBGPU_ROWS). wasm is the CPU's and is not measured here (the CPU drivers' tables have it).
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(llama llama-lora peers webgpu)
for part in "${parts[@]}"; do
  case $part in
    llama | llama-lora | peers | webgpu) ;;
    *) echo "run.sh: unknown part $part (llama, llama-lora, peers, webgpu)" >&2 && exit 2 ;;
  esac
done
deadline=$((SECONDS + ${GPU_BENCH_SECONDS:-540}))
mkdir -p "$OUT" /tmp/gpu
: > "$OUT/llama.txt"
: > "$OUT/rows.txt"
for f in .gpu/debs/*.deb; do dpkg -x "$f" /; done
ldconfig
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -f "$icd" ] && export VK_DRIVER_FILES=$icd VK_ICD_FILENAMES=$icd
python3 -c "import lzma, shutil; shutil.copyfileobj(lzma.open('.gpu/node.xz'), open('/tmp/gpu/node', 'wb'))"
chmod +x /tmp/gpu/node
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/log.txt"
cd .gpu/bundle
export XDG_RUNTIME_DIR=/tmp
for part in "${parts[@]}"; do
  left=$((deadline - SECONDS))
  if [ "$left" -lt 20 ]; then
    echo "== $part: skipped, ${left} s left of GPU_BENCH_SECONDS" | tee -a "$OUT/log.txt"
    continue
  fi
  echo "== $part (up to ${left} s)" | tee -a "$OUT/log.txt"
  if [ "$part" = webgpu ]; then
    BENCH_PRESETS=${BENCH_PRESETS:-tiny,small,base} BENCH_VARIANTS=${BENCH_VARIANTS:-kernels,tfjs-webgpu} \
      BENCH_REPEAT_TFJS_WEBGPU=${BENCH_REPEAT_TFJS_WEBGPU:-3} \
      timeout "$left" /tmp/gpu/node launch.mjs 2>&1 | tee -a "$OUT/log.txt" | grep '^WEBGPU_' >> "$OUT/rows.txt"
  else
    BENCH_SECTIONS=$part timeout "$left" /tmp/gpu/node launch.mjs gpuSections.mjs 2>> "$OUT/log.txt" \
      | tee -a "$OUT/log.txt" >> "$OUT/llama.txt"
  fi
  status=${PIPESTATUS[0]}
  [ "$status" -eq 124 ] && echo "== $part: cut short at the deadline" | tee -a "$OUT/log.txt"
  [ "$status" -ne 0 ] && [ "$status" -ne 124 ] && echo "== $part: exit $status" | tee -a "$OUT/log.txt"
done
echo "rows: $(wc -l < "$OUT/rows.txt"); Llama tables: $(grep -c '^## ' "$OUT/llama.txt")"
