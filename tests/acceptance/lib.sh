# What the acceptance checks share (sourced, not run). Each is a CTest case
# (acceptance.NAME, labels acceptance and gpu) that runs kbench end to end on
# a GPU: properties only a GPU shows.
#   tests/acceptance/NAME KBENCH WORKDIR [ARG...]
# Without a GPU it exits 77 (CTest's skip) before running anything; WORKDIR
# is made afresh and keeps every log. Each property checked prints one line,
# "ok" or "FAIL"; the exit status is 1 when one failed.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 KBENCH WORKDIR [ARG...]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
kb=$1 d=$2
shift 2
. "$root/ci/lib/args.sh"
kb_require_gpu
rm -rf "$d" && mkdir -p "$d"
d=$(cd "$d" && pwd)
fails=0
# check NAME COMMAND...: the property NAME holds when COMMAND succeeds.
check() {
  local n=$1
  shift
  if "$@"; then echo "ok   $n"; else echo "FAIL $n"; fails=$((fails + 1)); fi
}
# kbench's own skip (77: no usable GPU, though nvidia-smi lists one) ends the
# check as skipped, not failed.
skip_on_77() { [ "$1" -ne 77 ] || { echo "${0##*/}: kbench skipped (exit 77): nothing measured"; exit 77; }; }
finish() {
  echo "${0##*/}: $fails failed (logs: $d)"
  exit $((fails > 0))
}
