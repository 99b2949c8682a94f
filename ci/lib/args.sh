# Argument and host checks the shell tools of ci/ and tools/ share (sourced,
# not run).

# kb_help: --help prints the script's header comment (usage, options, exit
# codes), without the '#', and exits 0.
kb_help() {
  awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"
  exit 0
}

# kb_need "$@" inside a tool's option loop, before it reads "$2": under
# `set -u` a missing value would stop at "$2: unbound variable", exit 1; a usage
# error is exit 2, named.
kb_need() {
  [ $# -ge 2 ] || { echo "${0##*/}: $1 needs a value (see --help)" >&2; exit 2; }
}

# kb_require_gpu: exit 77 (nothing measured) with one line when nvidia-smi
# lists no GPU, before a tool starts kbench runs that would each skip: a
# check that measured nothing must neither pass nor read as a failure of
# what it checks.
kb_require_gpu() {
  # grep -c reads all of nvidia-smi's lines: grep -q would stop at the first,
  # and on a host of several GPUs nvidia-smi's next write then dies of SIGPIPE,
  # which pipefail would turn into "no GPU".
  local n=0
  command -v nvidia-smi >/dev/null 2>&1 && n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  if [ "${n:-0}" -eq 0 ]; then
    echo "${0##*/}: no GPU on this host (nvidia-smi lists none): nothing was measured" >&2
    exit 77
  fi
}
