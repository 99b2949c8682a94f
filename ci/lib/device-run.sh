# The opening every device-session run script repeats (sourced, not run), for
# measurements/sessionN/.../run*.sh run at the repository root on the GPU
# machine through the device tool (measurements/README: how builds reach it):
#   KB_TAR=r1.tgz; . ci/lib/device-run.sh "$0"
# - unpacks the carried build (.devbuild/build.tar.zst, its zstd and Check's
#   libsubunit) unless build/ exists (a warm machine keeps it);
# - W: a fresh work folder holding commit.txt (the build's commit and the
#   tree's), the script itself as run.sh, head.txt (time, GPU, driver, clock);
# - exports KBENCH_TUNE_CACHE (the committed H200 cache: a carried build's
#   built-in path does not exist there), K (build/kbench) and O (= W);
# - traps TERM (the device tool's time limit) to tar W into $OUT/$KB_TAR, so
#   a cut run still returns what it measured; kb_run_done tars it at the end;
# - st NAME RC: one status line with the seconds since the start, in
#   W/status.txt and on stdout.
: "${KB_TAR:?set KB_TAR (the tarball name under \$OUT) before sourcing}"
: "${OUT:?OUT: the output folder the device tool gives}"
T0=$(date +%s)
if [ ! -d build ]; then
  LD_LIBRARY_PATH=.devbuild/zbin .devbuild/zbin/zstd -dc --long=27 .devbuild/build.tar.zst | tar xf - || exit 3
  cp .devbuild/lib/libsubunit.so.0 /usr/lib/x86_64-linux-gnu/ && ldconfig
fi
W=$(mktemp -d)
cp .devbuild/commit.txt "$W/" 2>/dev/null; git rev-parse HEAD >> "$W/commit.txt"; cp "$1" "$W/run.sh"
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm --format=csv,noheader)" > "$W/head.txt"
export KBENCH_TUNE_CACHE=$PWD/baselines/tuning/NVIDIA_H200.txt K=$PWD/build/kbench O=$W
kb_run_tar() { (cd "$W" && tar czf "$OUT/$KB_TAR" --exclude='*/report' --exclude='*/prepare-*' .); }
trap 'kb_run_tar; exit 124' TERM
st() { echo "== $1 exit $2 (t=$(( $(date +%s) - T0 )))" | tee -a "$W/status.txt"; }
kb_run_done() { cp build/sol-*.txt "$W/" 2>/dev/null; kb_run_tar; cat "$W/status.txt"; }
