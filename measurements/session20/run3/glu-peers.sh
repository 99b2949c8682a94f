# Issue 16's table: every GLU shape of the default sweep (bf16), kbench's tuned backend
# (round 1; eager and fused come from the same call's gate), PyTorch eager and torch.compile (ci/peers/torch_peers.py, the read-pass
# L2 flush, the same byte model from kbench --describe), then kbench tuned again (round 2), so
# the PyTorch timings sit between two tuned rounds. glu-table.py builds the table.
B=geglu_forward,geglu_backward,swiglu_forward,swiglu_backward
$K ${B//,/ } --backend tuned --dtype bf16 --csv $O/glu-kb1.csv > $O/glu-kb1.log 2>&1; echo "glu kbench round 1 exit $?"
python3 ci/peers/torch_peers.py --kbench $K --benchmarks $B --backends torch_eager,torch_compile --out $O/glu-peers.csv > $O/glu-peers.log 2>&1; echo "glu torch_peers exit $?"
$K ${B//,/ } --backend tuned --dtype bf16 --csv $O/glu-kb2.csv > $O/glu-kb2.log 2>&1; echo "glu kbench round 2 exit $?"
