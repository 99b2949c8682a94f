#!/usr/bin/env bash
# Session 14, runs 5-6 (main, 1cb6000): ci/peers/peer-table on every one of the 97 peer shapes: kbench
# tuned, PyTorch eager and torch.compile in the same run, tuned measured before and after the PyTorch
# timings. Run 6 resumes run 5's out-peers/ (carried back) where the 10-minute call limit cut it.
set -u
n=$(cat .devkb/name.txt); mkdir -p build-$n
[ -x build-$n/kbench ] || LD_LIBRARY_PATH=.devkb/zbin .devkb/zbin/zstd -dc --long=27 .devkb/kbench.zst > build-$n/kbench
chmod +x build-$n/kbench
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" >> out-peers.head.txt
python3 -c "import torch; print(torch.__version__)" >> out-peers.head.txt 2>&1
rc=0; ci/peers/peer-table --out-dir out-peers --kbench build-$n/kbench --budget-s ${1:-540} || rc=$?
echo "peer-table exit $rc" | tee -a out-peers.head.txt
cp out-peers.head.txt out-peers/head.txt; cp "$0" out-peers/run.sh
tar czf $OUT/peer-table.tgz out-peers; cp out-peers/table.md $OUT/ 2>/dev/null
tail -12 out-peers/table.md
