#!/usr/bin/env bash
# Installs the Debian 12 packages gpubench builds and tests with, when missing.
# Idempotent: does nothing when all are present. Runs apt-get as root, or via sudo.
set -euo pipefail
packages=(
  build-essential cmake git pkg-config
  liblua5.4-dev lua5.4 lua-filesystem-dev lua-cjson-dev lua-argparse lua-inspect
  libvulkan-dev mesa-vulkan-drivers vulkan-tools
  glslc glslang-tools glslang-dev spirv-tools libshaderc-dev
  libxxhash-dev
  libreadline8 tmux gnuplot-nox
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
