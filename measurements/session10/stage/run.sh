#!/usr/bin/env bash
# Session 10, run 1: the staged norm forward (reload=2, rows staged in shared memory by
# bulk copies). Accuracy of forced staged configurations (3 dtypes, odd M, tiny and long
# rows), every input kind, memcheck / racecheck / synccheck on small shapes, then a timing
# grid of staged configurations beside the committed cache entry (the default tuned series
# of each invocation), bf16, the norm-forward sweep. Commands come from gen.py.
set -u
T0=$(date +%s); END=$((T0 + 570))
LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf -
cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
O=$OUT; L=$O/logs; mkdir -p $L; cp .devbuild/commit.txt $L/; D=measurements/session10/stage; cp $D/run.sh $D/gen.py $L/
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv,noheader)" > $L/head.txt
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt
# A list of commands as one step: each line's stdout appended, its exit code noted.
TL() { local n=$1 lim=$2 f=$3; local left=$((END - $(date +%s))); [ $left -lt $lim ] && lim=$left; [ $lim -le 5 ] && { echo "== $n skipped (no time)" | tee -a $L/status.txt; return; }; local t0=$(date +%s) bad=0 c=0; while read -r cmd; do [ $(( $(date +%s) - t0 )) -ge $lim ] && { echo "== $n cut after $c commands" >> $L/status.txt; break; }; c=$((c+1)); $PRE $cmd >> $L/$n.log 2>&1 || { bad=$((bad+1)); echo "rc=$? $cmd" >> $L/$n.fail; }; done < $f; echo "== $n $c cmds, $bad nonzero, $(( $(date +%s)-t0 )) s (t=$(( $(date +%s)-T0 )))" | tee -a $L/status.txt; }
python3 $D/gen.py acc > $L/acc.cmds
python3 $D/gen.py kinds > $L/kinds.cmds
python3 $D/gen.py san > $L/san.cmds
python3 $D/gen.py grid 32768x2048,32768x4096,32768x8192,32768x16384,32768x32768,576000x384,576000x512,1152000x512 > $L/grid1.cmds
python3 $D/gen.py grid 32768x256,32768x512,32768x1024,1152000x384 > $L/grid2.cmds
PRE= TL acc 60 $L/acc.cmds
PRE= TL kinds 40 $L/kinds.cmds
PRE="env KBENCH_CUPTI_LIB=none compute-sanitizer --tool memcheck --error-exitcode 9" TL memcheck 60 $L/san.cmds
PRE="env KBENCH_CUPTI_LIB=none compute-sanitizer --tool racecheck --error-exitcode 9" TL racecheck 50 $L/san.cmds
PRE="env KBENCH_CUPTI_LIB=none compute-sanitizer --tool synccheck --error-exitcode 9" TL synccheck 40 $L/san.cmds
PRE= TL grid1 300 $L/grid1.cmds
PRE= TL grid2 120 $L/grid2.cmds
cd $O && tar czf r1.tgz logs
cat $L/status.txt
grep -h -E "ERROR SUMMARY|RACECHECK SUMMARY" $L/memcheck.log $L/racecheck.log $L/synccheck.log | sort | uniq -c
for f in acc kinds; do echo "$f: $(grep -c PASS $L/$f.log) PASS lines, $(grep -c -E 'FAIL|ERROR|error' $L/$f.log) FAIL/ERROR lines"; grep -E "FAIL|ERROR|error" $L/$f.log | head -5; done
head -c 1500 $L/grid1.log
