#!/usr/bin/env bash
# Session 14, runs 1-3: leave the carried kbench (.devkb, one binary per call: the carry limit) on the
# machine as build-<name>/kbench for run 4's A/B/C/D comparison.
set -eu
n=$(cat .devkb/name.txt)
mkdir -p build-$n && LD_LIBRARY_PATH=.devkb/zbin .devkb/zbin/zstd -dc --long=27 .devkb/kbench.zst > build-$n/kbench && chmod +x build-$n/kbench
md5sum build-*/kbench; nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm --format=csv,noheader
