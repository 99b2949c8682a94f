#!/usr/bin/env bash
# Prepared in session 25 for the next session's first device call (session 25's second call was
# refused: the device tool lent no machine after run 1). ci/peers/peer-table on the five
# benchmarks where the committed baseline trails the stored best peer on 15 shapes (0.95-0.99:
# softmax backward 32768x4096-32768, RMSNorm forward 32768x2048/8192/32768 and the tall
# 384-column rows, LayerNorm forward 576000x512 and 1152000x512, the norm backwards at
# 32768x4096/8192 and 1152000x384): tuned, PyTorch eager and torch.compile, tuned again, in
# one call, until the time runs out (peer-table resumes from the same --out-dir: carry the
# returned pt/ back as an untracked folder and pass it again). No kernel changed in session
# 25 (its build is SASS-identical to the one run 1 gated), so this is the same-session
# comparison issue 17 asks for, not a check of new code.
set -u
KB_TAR=s26r1.tgz; . ci/lib/device-run.sh "$0"
END=$((T0 + ${RUN_S:-585}))
PT=${PT:-$W/pt}
left=$((END - $(date +%s) - 20))
timeout $((left + 10)) ci/peers/peer-table --out-dir $PT --kbench build/kbench \
  --benchmarks softmax_backward,rmsnorm_forward,layernorm_forward,rmsnorm_backward,layernorm_backward \
  --budget-s $left > $W/peer-table.log 2>&1; st peer-table $?
[ "$PT" = "$W/pt" ] || cp -r "$PT" "$W/pt"
tail -3 $W/peer-table.log
kb_run_done
