# torch.compile on the same shapes (torch_peers.py, the read-pass flush)
python3 ci/peers/torch_peers.py --kbench $K --out $O/peers.csv --resume --benchmarks geglu_backward --backends torch_compile --shapes 8192x3072,8192x8192,8192x14336,8192x16384,4096x28672,8192x28672
python3 ci/peers/torch_peers.py --kbench $K --out $O/peers.csv --resume --benchmarks swiglu_forward --backends torch_compile --shapes 8192x8192,4096x14336,4096x28672
python3 ci/peers/torch_peers.py --kbench $K --out $O/peers.csv --resume --benchmarks swiglu_backward --backends torch_compile --shapes 8192x8192,8192x11008,8192x14336,8192x16384,4096x28672
