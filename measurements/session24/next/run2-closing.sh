#!/usr/bin/env bash
# Prepared in session 24 (not run: no GPU that session). The next session's closing call, after
# run1.sh's picked cache entries (if any) have been reviewed and committed from its tarball:
# ci/closing-check --steps gate,scratch,readme,memcheck on the committed build and cache. The
# forcedbwd accuracy of the loop layouts comes from run1; the gate here covers every registered
# case, so a loop entry that reads SLOWER than its baseline, or a regression elsewhere, fails it;
# the gate and scratch results are ci/merge-faster's two runs (re-record only rows that moved to
# the loop and read FASTER in both).
set -u
KB_TAR=s25r2.tgz; . ci/lib/device-run.sh "$0"
OUT=$W/cc timeout 480 ci/closing-check --steps gate,scratch,readme,memcheck --budget-s 470 > $W/closing.log 2>&1; st closing $?
tail -15 $W/closing.log
kb_run_done
