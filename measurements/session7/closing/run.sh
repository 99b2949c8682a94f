#!/usr/bin/env bash
# Session 7, closing run: ci/closing-check (gate cold, README command, concurrent softmax ctests,
# gate quality, memcheck, accuracy) on main as committed.
set -u
tar xzf .devbuild/build.tgz
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
rm -rf build/sol-*.txt build/gemm-sol-*.txt ~/.cache/kbench
mkdir -p $OUT/closing && cp .devbuild/commit.txt $OUT/closing/
OUT=$OUT/closing ci/closing-check --budget-s 520 > $OUT/closing/closing-check.log 2>&1; echo "closing-check exit $?" | tee -a $OUT/closing/closing-check.log
cd $OUT && tar czf closing.tgz closing
cat closing/summary.txt 2>/dev/null; tail -5 closing/closing-check.log
