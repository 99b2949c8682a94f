#!/usr/bin/env bash
# Session 10, run 6: after the review mends (tuning-cache visitor in tuner.c, ci/lib/gpu.sh):
# the unit tests on the GPU box, ci/closing-check's gate and scratch steps (the scratch step now
# finds the committed baseline through kb_baseline_file), every tuned case's configuration
# source (cache entries still found).
set -u
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; cp measurements/session10/mend-check/run.sh $L/
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
ctest --test-dir build -L unit > $L/unit.log 2>&1; echo "unit exit $?" | tee -a $L/status.txt
build/kbench --all --backend tuned --no-timing --print-benchmark-result > $L/sources.log 2>&1; echo "sources exit $?" | tee -a $L/status.txt
OUT=$O/cc ci/closing-check --steps gate,scratch --budget-s 380 > $L/closing.log 2>&1; echo "closing exit $?" | tee -a $L/status.txt
cp $O/cc/summary.txt $O/cc/scratch.log $L/ 2>/dev/null
grep -o "([a-z:]*)\]" $L/sources.log | sort | uniq -c | tee -a $L/status.txt
tail -3 $L/unit.log; cat $L/summary.txt; tail -2 $L/scratch.log
rm -rf $O/cc/gate/report/*.png $O/cc/gate/prepare-*
cd $O && tar czf r6.tgz logs cc/gate/results cc/scratch-results.csv && rm -rf cc
