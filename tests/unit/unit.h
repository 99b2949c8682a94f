/* The Check suites' constructors: each tests/unit/test_<name>.c defines
 * kb_suite_<name>(). The suites of the binary being built are the list
 * tests/CMakeLists.txt generates for it (KB_UNIT_SUITES, one
 * KB_UNIT_SUITE(name) a line), which declares them here and makes main.c's
 * table. */
#ifndef KB_UNIT_H
#define KB_UNIT_H
#include <check.h>

#define KB_UNIT_SUITE(name) Suite *kb_suite_##name(void);
#include KB_UNIT_SUITES
#undef KB_UNIT_SUITE

#endif
