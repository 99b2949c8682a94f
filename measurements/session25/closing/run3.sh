#!/usr/bin/env bash
# Session 25, device call 3 (closing): ci/closing-check --steps gate,scratch,readme,memcheck on
# the final build and the committed cache (unchanged this session: run 1's pick moved nothing).
# The gate covers every registered case, so a regression anywhere, the bwd_reg kernels whose
# SASS the shared slot sum changed included, fails it; the gate and scratch results are
# ci/merge-faster's two runs (rows re-recorded only where a change this session is behind them).
set -u
KB_TAR=s25r3.tgz; . ci/lib/device-run.sh "$0"
OUT=$W/cc timeout 480 ci/closing-check --steps gate,scratch,readme,memcheck --budget-s 470 > $W/closing.log 2>&1; st closing $?
tail -15 $W/closing.log
kb_run_done
