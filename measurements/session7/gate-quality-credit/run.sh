#!/usr/bin/env bash
# Session 7, run 9: gate quality with the clock credit that excuses but never acquits; then
# ci/gate on the MLP cases against the committed baseline.
set -u
T0=$(date +%s)
tar xzf .devbuild/build.tgz
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
L=$OUT/logs; mkdir -p $L; cp .devbuild/commit.txt $L/
OUT=$L/gq timeout 110 ci/gate-quality --backends eager --runs same5,time5 > $L/gate-quality.log 2>&1; echo "== gq exit $? t=$(( $(date +%s)-T0 ))" | tee -a $L/status.txt
left=$((150 - ($(date +%s)-T0))); [ $left -gt 10 ] && { timeout $left ci/gate --no-build --labels mlp --out $L/gate-mlp > $L/gate-mlp.log 2>&1; echo "== gate-mlp exit $? t=$(( $(date +%s)-T0 ))" | tee -a $L/status.txt; }
cd $OUT && tar czf r9.tgz logs
cat $L/gq/summary.txt 2>/dev/null; grep -h "clock may explain" $L/gq/*.log | sed -E 's/.*NOISY/NOISY/' | cut -c1-160 | head -12; grep -E "selected|passed|noisy" $L/gate-mlp.log | tail -8
