#!/usr/bin/env bash
FINAL=$OUT
G=build-dist/gpubench
mkdir -p /tmp/logs/c8
export GPUBENCH_CACHE_DIR=/tmp/gpubench-cache
[[ -f .gpu-cache/kernels.tgz ]] && mkdir -p $GPUBENCH_CACHE_DIR && tar xzf .gpu-cache/kernels.tgz -C $GPUBENCH_CACHE_DIR
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
for b in vulkan cuda; do
  timeout 120 $G --backend $b experiments/linear_suite.lua --suite all --vendor off --json /tmp/logs/c8/suite_$b.jsonl > /tmp/logs/c8/suite_$b.log 2>&1
  echo "$b rc=$?"; grep -E "yes *$" /tmp/logs/c8/suite_$b.log | cut -c1-40,200-; grep -E "^\* (B/A|wall)" /tmp/logs/c8/suite_$b.log
  grep -E " 1 +[0-9]" /tmp/logs/c8/suite_$b.log | awk '{print $1, $8, $13, $(NF-1), $NF}' | head -11
done
tar czf $FINAL/logs.tgz -C /tmp/logs .
