#!/usr/bin/env bash
# Session 13, run 2a: leave main's kbench (107d2d1, before fwd_reg_one) on the machine as build-old/kbench
# for run 2b's A/B (the carry limit holds one kbench binary per call).
set -eu
mkdir -p build-old && LD_LIBRARY_PATH=.devold/zbin .devold/zbin/zstd -dc --long=27 .devold/kbench.zst > build-old/kbench && chmod +x build-old/kbench
ls -la build-old; nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader
