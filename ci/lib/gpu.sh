# The committed baseline file of this host's first GPU (sourced, not run):
# ci/refresh-baselines. kbench's own default name for it
# (base/files.c, kb_gpu_file_name): the GPU's name with blanks, '/' and
# '\' as '_', under baselines/.
kb_baseline_file() { # repository root
  local g
  g=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0) || return 1
  [ -n "$g" ] || return 1
  printf '%s/baselines/%s.csv\n' "$1" "$(printf '%s' "$g" | tr ' \t/\\' '____')"
}
