# The step runner of tools/device-check (sourced, not run).
#
# The script sets: name (for messages), steps (--steps), known (every step it
# has), out (log folder), step_timeout (default seconds per step) and
# step_tail (log lines echoed after a step); it reads $status at the end.

# A misspelt or empty --steps would skip its steps and pass having checked nothing.
steps_check() {
  local s
  for s in ${steps//,/ }; do
    case ",$known," in *",$s,"*) ;; *) echo "$name: unknown step '$s' (steps: $known)" >&2; exit 2 ;; esac
  done
  [ -n "${steps//,/}" ] || { echo "$name: --steps is empty" >&2; exit 2; }
}

has() { case ",$steps," in *",$1,"*) return 0 ;; esac; return 1; }

status=0
step() { # name, command...
  local sname=$1; shift
  local t0=$(date +%s)
  # A hung kernel must not eat the whole run: each step has a limit.
  timeout "${STEP_TIMEOUT:-$step_timeout}" "$@" > "$out/$sname.log" 2>&1
  local rc=$?
  echo "== $sname: exit $rc, $(( $(date +%s) - t0 )) s"
  tail -n "$step_tail" "$out/$sname.log"
  # STEP_OK=1: exit 1 is the expected outcome (a planted bug caught).
  [ $rc -eq 0 ] || { [ "${STEP_OK:-0}" = 1 ] && [ $rc -eq 1 ]; } || status=1
}
