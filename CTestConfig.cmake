# CDash submission (ctest -D Experimental / Nightly / Continuous).
# No submission happens unless a drop site is given, through the cache
# variable KBENCH_CDASH_SITE or the environment variable of the same name,
# e.g. KBENCH_CDASH_SITE=https://my.cdash.org/submit.php?project=kbench
set(CTEST_PROJECT_NAME "kbench")
set(CTEST_NIGHTLY_START_TIME "01:00:00 UTC")
if(DEFINED ENV{KBENCH_CDASH_SITE})
  set(KBENCH_CDASH_SITE "$ENV{KBENCH_CDASH_SITE}")
endif()
if(KBENCH_CDASH_SITE)
  set(CTEST_SUBMIT_URL "${KBENCH_CDASH_SITE}")
  set(CTEST_DROP_SITE_CDASH TRUE)
endif()
