#!/usr/bin/env bash
# Packs `npm run bench -- webgpu`, `-- llama`, `-- llama-lora` and the lab's rows of `-- peers` for a machine with a real GPU
# and no Node (the device tool's machines): .gpu/ holds Node itself (xz), the benches as two
# entry modules with their shaders (bench/gpu/vite.config.ts), Dawn's `webgpu` package and the
# Vulkan loader's Debian packages. Run here, then on the device:
#   run: command "bash bench/gpu/run.sh", carry [".gpu"], timeout_s 600
# (run.sh's arguments choose its parts: llama, llama-lora, peers, webgpu), read <files_at>/llama.txt's
# tables, and render the webgpu rows here beside the CPU drivers':
#   WEBGPU_ROWS=<files_at>/rows.txt npm run bench -- webgpu
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >> .git/info/exclude
rm -rf .gpu && mkdir -p .gpu/bundle/node_modules .gpu/debs /tmp/gpu-apt/partial
npx vite build --config bench/gpu/vite.config.ts --logLevel warn
cp bench/gpu/launch.mjs .gpu/bundle/
mkdir -p .gpu/bundle/node_modules/webgpu/dist/linux-x64
cp node_modules/webgpu/package.json node_modules/webgpu/*.js .gpu/bundle/node_modules/webgpu/
cp node_modules/webgpu/dist/linux-x64/dawn.node .gpu/bundle/node_modules/webgpu/dist/linux-x64/
xz -T0 -6 -c "$(readlink -f "$(command -v node)")" > .gpu/node.xz
# The Vulkan loader (the device's driver folder has the NVIDIA ICD but maybe no loader).
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/gpu-apt'
apt-get $o update -qq >/dev/null
(cd .gpu/debs && apt-get $o download -qq libvulkan1 >/dev/null)
du -sh .gpu
