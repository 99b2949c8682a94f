#!/usr/bin/env bash
# Session 23, run 6 (closing): ci/closing-check --steps gate,scratch,readme,memcheck on the final
# build and committed cache (the cluster-staged LayerNorm forward entry, the four db=3 odd-N
# backward entries); the gate and scratch results give ci/merge-faster its two runs.
set -u
KB_TAR=s23r6.tgz; . ci/lib/device-run.sh "$0"
OUT=$W/cc timeout 480 ci/closing-check --steps gate,scratch,readme,memcheck --budget-s 470 > $W/closing.log 2>&1; st closing $?
tail -15 $W/closing.log
kb_run_done
