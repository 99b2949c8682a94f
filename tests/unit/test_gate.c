/* The perf verdict on synthetic distributions: kb_verdict_decide's band,
 * floor and fastest-sample rules, kb_judge's time-and-judge policy, and the
 * verdict names. The test knobs are test_gate_knobs.c's. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gate.h"
#include "registry.h"
#include "unit.h"

/* The gate's defaults at another tolerance (ci/gate runs at 5 %). */
static kb_gate_opts opts_at(double tolerance)
{
    kb_gate_opts o;
    kb_gate_defaults(&o);
    o.tolerance = tolerance;
    return o;
}

static kb_verdict decide(double base, double base_noise, double now, double now_noise)
{
    kb_gate_opts o;
    kb_gate_defaults(&o);
    double change, band;
    kb_perf b = {base, base_noise, NAN, NAN}, n = {now, now_noise, NAN, NAN};
    return kb_verdict_decide(&o, &b, &n, &change, &band);
}

START_TEST(identical_is_same)
{
    ck_assert_int_eq(decide(3000, 0.003, 3000, 0.003), KB_VERDICT_SAME);
    ck_assert_int_eq(decide(3000, 0, 3000, 0), KB_VERDICT_SAME);
}
END_TEST

START_TEST(two_percent_is_same)
{
    ck_assert_int_eq(decide(3000, 0.003, 2940, 0.003), KB_VERDICT_SAME);
    ck_assert_int_eq(decide(3000, 0.003, 3060, 0.003), KB_VERDICT_SAME);
}
END_TEST

START_TEST(ten_percent_beyond_band)
{
    /* 12 % slower with quiet runs: outside 10 % + 2*noise. */
    ck_assert_int_eq(decide(3000, 0.002, 2640, 0.002), KB_VERDICT_SLOWER);
    ck_assert_int_eq(decide(3000, 0.002, 3360, 0.002), KB_VERDICT_FASTER);
    /* 9 % slower is inside the default 10 % tolerance. */
    ck_assert_int_eq(decide(3000, 0.002, 2730, 0.002), KB_VERDICT_SAME);
    /* A tighter tolerance flags it. */
    kb_gate_opts o = opts_at(0.05);
    double c, b;
    kb_perf pb = {3000, 0.002, NAN, NAN}, pn = {2730, 0.002, NAN, NAN};
    ck_assert_int_eq(kb_verdict_decide(&o, &pb, &pn, &c, &b), KB_VERDICT_SLOWER);
    ck_assert_double_eq_tol(c, -0.09, 1e-12);
    ck_assert_double_eq_tol(b, 0.05 + 2 * sqrt(2) * 0.002, 1e-12);
}
END_TEST

START_TEST(noise_widens_the_band)
{
    /* 12 % slower but both runs with 2 % spread: band 10 + 2*2.83 = 15.7 %. */
    ck_assert_int_eq(decide(3000, 0.02, 2640, 0.02), KB_VERDICT_SAME);
}
END_TEST

/* A baseline recorded on a noisy machine (noise 0.6 on every row) must not
 * switch the gate off: its noise counts at most 2 x the noise limit (10 %),
 * so a 40 % slowdown of a quiet run is SLOWER, with the band that says so. */
START_TEST(noisy_baseline_keeps_the_gate)
{
    ck_assert_int_eq(decide(3000, 0.6, 1800, 0.002), KB_VERDICT_SLOWER);
    kb_gate_opts o;
    kb_gate_defaults(&o);
    double c, b;
    kb_perf pb = {3000, 0.6, NAN, NAN}, pn = {1800, 0.002, NAN, NAN};
    ck_assert_int_eq(kb_verdict_decide(&o, &pb, &pn, &c, &b), KB_VERDICT_SLOWER);
    ck_assert_double_eq_tol(b, 0.10 + 2 * sqrt(0.10 * 0.10 + 0.002 * 0.002), 1e-12);
    /* Below the clamp the baseline's noise counts in full, as before. */
    pb.noise = 0.064; /* the committed H200 baseline's largest */
    ck_assert_int_eq(kb_verdict_decide(&o, &pb, &pn, &c, &b), KB_VERDICT_SLOWER);
    ck_assert_double_eq_tol(b, 0.10 + 2 * sqrt(0.064 * 0.064 + 0.002 * 0.002), 1e-12);
    /* The clamp follows the noise limit. */
    o.noise_limit = 0.2;
    pb.noise = 0.6;
    ck_assert_int_eq(kb_verdict_decide(&o, &pb, &pn, &c, &b), KB_VERDICT_SAME);
    ck_assert_double_eq_tol(b, 0.10 + 2 * sqrt(0.4 * 0.4 + 0.002 * 0.002), 1e-12);
}
END_TEST

START_TEST(bimodal_is_noisy)
{
    /* A run whose samples split between two clocks: robust spread 8 %. */
    ck_assert_int_eq(decide(3000, 0.003, 2500, 0.08), KB_VERDICT_NOISY);
}
END_TEST

START_TEST(missing_baseline)
{
    ck_assert_int_eq(decide(NAN, NAN, 3000, 0.003), KB_VERDICT_NO_BASELINE);
    ck_assert_int_eq(decide(0, 0, 3000, 0.003), KB_VERDICT_NO_BASELINE);
    ck_assert_int_eq(decide(3000, 0.01, NAN, NAN), KB_VERDICT_NONE);
}
END_TEST

/* A 5 us case that lost 1 us of launch jitter: -17 % GB/s, but the time
 * change is inside a 1.2 us floor: SAME. Just past the floor: SLOWER. */
START_TEST(time_floor_for_launch_bound_cases)
{
    kb_gate_opts o = opts_at(0.05);
    o.floor_ms = 0.0012;
    double c, b;
    const double bytes = 40e3; /* 40 KB: 8 GB/s at 5 us */
    kb_perf base = {bytes / 5e-6 / 1e9, 0.01, 0.005, NAN};
    kb_perf now = {bytes / 6e-6 / 1e9, 0.01, 0.006, NAN};
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SAME);
    ck_assert(c < -0.16);
    /* Exactly at the floor is still SAME; beyond it the GB/s rule decides. */
    now.median_ms = base.median_ms + o.floor_ms;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SAME);
    {
        /* A whole-suite ci/gate on the H200 (2026-12-03), LayerNorm backward
         * bf16 4096x1: two kernels under a 2 x 0.512 us floor, medians from
         * fp32 event times 1.024 us apart; their difference reads a few ulp
         * above the floor in double. Exactly at the floor: SAME, not SLOWER. */
        kb_gate_opts f = opts_at(0.05); /* ci/gate's */
        f.floor_ms = 2 * 0.000512;
        const double lb = 24584; /* bytes: 3.15 GB/s at 7.808 us */
        const float tb = 0.007808f, tn = 0.008832f;
        kb_perf lbase = {lb / ((double)tb * 1e-3) / 1e9, 0.006, (double)tb, NAN};
        kb_perf lnow = {lb / ((double)tn * 1e-3) / 1e9, 0.032, (double)tn, NAN};
        ck_assert((double)tn - (double)tb > f.floor_ms);
        ck_assert_int_eq(kb_verdict_decide(&f, &lbase, &lnow, &c, &b), KB_VERDICT_SAME);
        lnow.median_ms = (double)tn + 1e-4; /* 100 ns past the floor: the GB/s rule */
        lnow.gbps = lb / (lnow.median_ms * 1e-3) / 1e9;
        ck_assert_int_eq(kb_verdict_decide(&f, &lbase, &lnow, &c, &b), KB_VERDICT_SLOWER);
    }
    now.median_ms = 0.0063;
    now.gbps = bytes / 6.3e-6 / 1e9;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SLOWER);
    /* Faster within the floor is SAME too (no refresh candidate from jitter). */
    now.median_ms = 0.004;
    now.gbps = bytes / 4e-6 / 1e9;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SAME);
    /* A long case is judged on GB/s alone: 10 % of 2 ms is far above it. */
    kb_perf big_b = {3000, 0.002, 2.0, NAN}, big_n = {2700, 0.002, 2.2, NAN};
    ck_assert_int_eq(kb_verdict_decide(&o, &big_b, &big_n, &c, &b), KB_VERDICT_SLOWER);
    /* Floor 0 (not measured) or an unknown time: the GB/s rule alone. */
    o.floor_ms = 0;
    now.median_ms = 0.006;
    now.gbps = bytes / 6e-6 / 1e9;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SLOWER);
    o.floor_ms = 0.0012;
    now.median_ms = NAN;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SLOWER);
}
END_TEST

/* The fastest-sample condition: a bimodal case (most samples in a slow state
 * of the machine, the fastest at the baseline's speed) is NOISY, not SLOWER;
 * code 10 % slower moves the fastest sample too and stays SLOWER. */
START_TEST(fastest_sample_decides_slower)
{
    kb_gate_opts o = opts_at(0.05);
    double c, b;
    /* the H200 case: baseline 3.79 ms; now median 4.35 ms, fastest 3.84 ms */
    const double flops_bytes = 486e6;
    kb_perf base = {flops_bytes / 3.79e-3 / 1e9, 0.002, 3.79, NAN};
    kb_perf now = {flops_bytes / 4.35e-3 / 1e9, 0.006, 4.35, 3.84};
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_NOISY);
    ck_assert_double_eq_tol(kb_best_change(&now, c), 3.79 / 3.84 - 1, 1e-9);
    /* +10 % time on every sample: the fastest is 9 % below too */
    now = (kb_perf){flops_bytes / 4.169e-3 / 1e9, 0.002, 4.169, 4.15};
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SLOWER);
    ck_assert(kb_best_change(&now, c) < -0.05);
    /* exactly at the tolerance: NOISY; just beyond: SLOWER */
    now.min_ms = 3.79 / 0.95;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_NOISY);
    now.min_ms = 3.79 / 0.949;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SLOWER);
    /* no fastest sample known (a results row from elsewhere): the median decides */
    now.min_ms = NAN;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SLOWER);
    ck_assert(isinf(kb_best_change(&now, c)));
    now.min_ms = 0;
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SLOWER);
    /* it never turns SAME or FASTER into anything else */
    now = (kb_perf){base.gbps, 0.002, 3.79, 2.0};
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_SAME);
    now = (kb_perf){base.gbps * 1.2, 0.002, 3.79 / 1.2, 3.0};
    ck_assert_int_eq(kb_verdict_decide(&o, &base, &now, &c, &b), KB_VERDICT_FASTER);
}
END_TEST

/* kb_judge: the bimodal round is measured again and says why; a second
 * bimodal round is final NOISY and passes. */
START_TEST(judge_bimodal_message)
{
    kb_gate_opts o = opts_at(0.05);
    const kb_judge_base b = {128.4, 0.0018, 3.79, 3};
    kb_judge_round m = {{128.4 * 3.79 / 4.35, 0.006, 4.35, 3.84}, 1980, 1980};
    kb_judgement j;
    kb_judge(&o, &b, &m, 0, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert(j.remeasure && !j.fails);
    ck_assert_msg(strstr(j.message, "NOISY: median 111.9 GB/s vs baseline 128.4 GB/s (-12.9%") &&
                      strstr(j.message, "fastest sample is -1.3% (3.8400 ms against a median of "
                                        "4.3500 ms)") &&
                      strstr(j.message, "slower code would slow them all"),
                  "%s", j.message);
    kb_judge(&o, &b, &m, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert(!j.remeasure && !j.fails);
    /* noise above the limit: NOISY for that, and the message gives the noise */
    m.now.noise = 0.08;
    kb_judge(&o, &b, &m, 0, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert_msg(strstr(j.message, "noise 8.0% now") && !strstr(j.message, "fastest sample"),
                  "%s", j.message);
    m.now.noise = 0.006;
    /* the same median with a slow fastest sample: SLOWER, confirmed by a
     * second round, then fails */
    m.now.min_ms = 4.30;
    kb_judge(&o, &b, &m, 0, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    ck_assert(!j.fails && j.remeasure);
    kb_judge(&o, &b, &m, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    ck_assert(j.fails && !j.remeasure);
    ck_assert_ptr_nonnull(strstr(j.message, "SLOWER: 111.9 GB/s"));
}
END_TEST

/* Every verdict x throttled combination of the runner's policy. */
START_TEST(remeasure_throttle_policy)
{
    const kb_verdict all[] = {KB_VERDICT_NONE, KB_VERDICT_NO_BASELINE, KB_VERDICT_SAME,
                              KB_VERDICT_FASTER, KB_VERDICT_SLOWER, KB_VERDICT_NOISY,
                              KB_VERDICT_FUSION_CHANGED};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        const kb_verdict v = all[i];
        /* quiet GPU: NOISY is measured again, and SLOWER is confirmed by a
         * second round before it fails the case; nothing is rewritten */
        ck_assert_int_eq(kb_policy_remeasure(v, 0),
                         v == KB_VERDICT_NOISY || v == KB_VERDICT_SLOWER);
        ck_assert_int_eq(kb_policy_final(v, 0), v);
        /* throttled: everything that has a baseline is measured again */
        ck_assert_int_eq(kb_policy_remeasure(v, 1), v != KB_VERDICT_NO_BASELINE);
        ck_assert_int_eq(kb_policy_final(v, 1),
                         v == KB_VERDICT_SLOWER ? KB_VERDICT_NOISY : v);
        ck_assert_int_eq(kb_policy_fails(v),
                         v == KB_VERDICT_SLOWER || v == KB_VERDICT_FUSION_CHANGED);
    }
    /* so a throttled SLOWER never fails the case */
    ck_assert(!kb_policy_fails(kb_policy_final(KB_VERDICT_SLOWER, 1)));
}
END_TEST

/* ---- kb_judge: the runner's time-and-judge policy, branch by branch ---- */
static const kb_judge_base BASE = {3000, 0.002, 0.1, 0};
static const kb_judge_base NO_ROW = {NAN, NAN, NAN, 0};

static kb_judgement judge(const kb_judge_base *b, double gbps, double noise, double median_ms,
                          double mhz, double max_mhz, int round)
{
    kb_gate_opts o;
    kb_gate_defaults(&o);
    kb_judge_round m = {{gbps, noise, median_ms, NAN}, mhz, max_mhz};
    kb_judgement j;
    kb_judge(&o, b, &m, round, "baselines/x.csv", &j);
    return j;
}

START_TEST(judge_quiet_verdicts)
{
    /* SAME: final, passes, nothing to say */
    kb_judgement j = judge(&BASE, 3000, 0.002, 0.1, 1980, 1980, 0);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SAME);
    ck_assert(!j.remeasure && !j.fails && !j.throttled);
    ck_assert_str_eq(j.message, "");
    /* SLOWER: measured again before it counts; SLOWER in the second round
     * too: final, fails (slower code is slower in both rounds) */
    j = judge(&BASE, 2640, 0.002, 0.1136, 1980, 1980, 0);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    ck_assert(j.remeasure && !j.fails);
    j = judge(&BASE, 2640, 0.002, 0.1136, 1980, 1980, 1);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    ck_assert(!j.remeasure && j.fails);
    ck_assert_str_eq(j.message, "SLOWER: 2640.0 GB/s vs baseline 3000.0 GB/s (-12.0%, band "
                                "+-10.6%, noise 0.2% now, 0.2% baseline)");
    /* FASTER: passes, says so */
    j = judge(&BASE, 3360, 0.002, 0.089, 1980, 1980, 0);
    ck_assert_int_eq(j.verdict, KB_VERDICT_FASTER);
    ck_assert(!j.remeasure && !j.fails);
    ck_assert_ptr_nonnull(strstr(j.message, "FASTER: 3360.0 GB/s vs baseline 3000.0 GB/s (+12.0%"));
    /* no row: NO_BASELINE names the file, passes, never measured again */
    j = judge(&NO_ROW, 3000, 0.002, 0.1, 1980, 1980, 0);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NO_BASELINE);
    ck_assert(!j.remeasure && !j.fails);
    ck_assert_str_eq(j.message, "NO_BASELINE: baselines/x.csv has no row for this case: its speed "
                                "is not gated");
    /* no measurement (GB/s NaN): NONE, passes */
    j = judge(&BASE, NAN, NAN, NAN, 1980, 1980, 0);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NONE);
    ck_assert(!j.remeasure && !j.fails);
    ck_assert_str_eq(j.message, "");
}
END_TEST

START_TEST(judge_noisy_measured_again)
{
    kb_judgement j = judge(&BASE, 2500, 0.08, 0.12, 1980, 1980, 0);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert(j.remeasure && !j.fails);
    ck_assert_ptr_nonnull(strstr(j.message, "NOISY: 2500.0 GB/s"));
    /* the second round is final whatever it says */
    j = judge(&BASE, 2500, 0.08, 0.12, 1980, 1980, 1);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert(!j.remeasure && !j.fails);
    j = judge(&BASE, 2640, 0.002, 0.1136, 1980, 1980, 1);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    ck_assert(!j.remeasure && j.fails);
}
END_TEST

START_TEST(judge_throttled)
{
    /* below 75 % of the peak: throttled, measured again, says why */
    kb_judgement j = judge(&BASE, 3000, 0.002, 0.1, 1400, 1980, 0);
    ck_assert(j.throttled && j.remeasure && !j.fails);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SAME);
    ck_assert_str_eq(j.message, "SM clock 1400 MHz after timing, below 75% of the 1980 MHz peak: "
                                "throttled or shared GPU");
    /* exactly 75 % is not throttled; an unknown peak never is */
    j = judge(&BASE, 3000, 0.002, 0.1, 1485, 1980, 0);
    ck_assert(!j.throttled && !j.remeasure);
    j = judge(&BASE, 3000, 0.002, 0.1, 100, 0, 0);
    ck_assert(!j.throttled && !j.remeasure);
    /* throttled in the final round: a SLOWER becomes NOISY and passes; the
     * message stays the GB/s comparison */
    j = judge(&BASE, 2640, 0.002, 0.1136, 1400, 1980, 1);
    ck_assert(j.throttled && !j.remeasure && !j.fails);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert_str_eq(j.message, "NOISY: 2640.0 GB/s vs baseline 3000.0 GB/s (-12.0%, band +-10.6%), "
                                "SLOWER on a GPU whose SM clock read 1400 MHz after timing, below "
                                "75% of its 1980 MHz peak (throttled or shared): its speed is not "
                                "judged");
    /* throttled in round 0: the SLOWER is not final yet */
    j = judge(&BASE, 2640, 0.002, 0.1136, 1400, 1980, 0);
    ck_assert(j.remeasure && !j.fails);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    /* a compute-bound case: throttled as soon as the clock is more than the
     * tolerance (default 10 %) below the peak */
    kb_gate_opts go;
    kb_gate_defaults(&go);
    kb_judge_round cm = {{2640, 0.002, 0.1136, 0.1134}, 1700, 1980, 1};
    kb_judge(&go, &BASE, &cm, 1, "b.csv", &j);
    ck_assert(j.throttled && !j.fails);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    cm.sm_mhz = 1800; /* 90.9 %: not throttled, the SLOWER stands */
    kb_judge(&go, &BASE, &cm, 1, "b.csv", &j);
    ck_assert(!j.throttled && j.fails);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    cm = (kb_judge_round){{3000, 0.002, 0.1, 0.099}, 1700, 1980, 1};
    kb_judge(&go, &BASE, &cm, 0, "b.csv", &j);
    ck_assert(j.throttled && j.remeasure);
    ck_assert_str_eq(j.message, "SM clock 1700 MHz after timing, below 90% of the 1980 MHz peak: "
                                "power-capped or shared GPU, and this compute-bound case's time "
                                "follows the clock");
    cm.compute_bound = 0; /* memory-bound: 86 % is not throttled */
    kb_judge(&go, &BASE, &cm, 0, "b.csv", &j);
    ck_assert(!j.throttled && !j.remeasure);
    /* a baseline that knows its clock: compared at equal clocks. 12 % slower
     * at a 12 % lower clock may be the same code: not judged (NOISY, passes,
     * measured again; the credit excuses, it does not acquit); 12 % slower at
     * the same clock is slower code, whatever the clock */
    const kb_judge_base cb = {3000, 0.002, 0.1, 0, 1980};
    cm = (kb_judge_round){{3000 / 1.12, 0.002, 0.112, 0.1118}, 1980 / 1.12, 1980, 1};
    kb_judge(&go, &cb, &cm, 1, "b.csv", &j);
    ck_assert(!j.throttled && !j.fails);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert(fabs(j.clock_scale - 1 / 1.12) < 1e-12);
    ck_assert(fabs(j.change - (1 / 1.12 - 1)) < 1e-9); /* the face-value change */
    ck_assert_str_eq(j.message, "NOISY: 2678.6 GB/s vs baseline 3000.0 GB/s (-10.7%, band +-10.6%) "
                                "at face value, +0.0% at equal SM clocks (1768 MHz now, 1980 MHz "
                                "in the baseline): the clock may explain it, so its speed is not "
                                "judged");
    kb_judge(&go, &cb, &cm, 0, "b.csv", &j); /* round 0: measured again */
    ck_assert(j.remeasure && !j.fails);
    /* 3 % slower at a 12 % lower clock: SAME at face value, no credit needed */
    cm = (kb_judge_round){{2910, 0.002, 0.1031, 0.1029}, 1980 / 1.12, 1980, 1};
    kb_judge(&go, &cb, &cm, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SAME);
    /* below the band at face value with the fastest sample at the baseline's
     * speed (NOISY at face value), inside it at equal clocks: still not
     * judged, never acquitted as SAME */
    cm = (kb_judge_round){{3000 / 1.12, 0.002, 0.112, 0.1}, 1980 / 1.12, 1980, 1};
    kb_judge(&go, &cb, &cm, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert_ptr_nonnull(strstr(j.message, "the fastest sample is")); /* its own reason */
    ck_assert_ptr_null(strstr(j.message, "equal SM clocks"));
    /* NOISY by its noise at face value: the noise is the reason, not the clock */
    cm = (kb_judge_round){{2000, 0.08, 0.15, 0.12}, 1980 / 1.12, 1980, 1};
    kb_judge(&go, &cb, &cm, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NOISY);
    ck_assert_ptr_null(strstr(j.message, "clock may explain"));
    /* SAME at face value inside the launch-jitter floor stays SAME, whatever
     * the clock (a 10 us case 1.8 us slower under a 2 us floor) */
    kb_gate_opts gf = go;
    gf.floor_ms = 0.002;
    const kb_judge_base small = {3000, 0.002, 0.010, 0, 1980};
    cm = (kb_judge_round){{3000 / 1.18, 0.002, 0.0118, 0.0117}, 1980 / 1.12, 1980, 1};
    kb_judge(&gf, &small, &cm, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SAME);
    /* a FASTER only the credit makes: the face value, without the
     * equal-clock tag (its numbers are not scaled) */
    cm = (kb_judge_round){{3150, 0.002, 0.0952, 0.095}, 1980 / 1.12, 1980, 1};
    kb_judge(&go, &cb, &cm, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SAME);
    ck_assert_ptr_null(strstr(j.message, "equal SM clocks"));
    /* the same time at a lower clock is not FASTER: the credit never makes a
     * speed-up (the face value, SAME, stands) */
    cm = (kb_judge_round){{3000, 0.002, 0.1, 0.0998}, 1980 / 1.12, 1980, 1};
    kb_judge(&go, &cb, &cm, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SAME);
    ck_assert(fabs(j.change) < 1e-9);
    ck_assert_ptr_null(strstr(j.message, "FASTER"));
    const kb_judge_base cb2 = {3000, 0.002, 0.1, 0, 1700};
    cm = (kb_judge_round){{3000 / 1.12, 0.002, 0.112, 0.1118}, 1700, 1980, 1};
    kb_judge(&go, &cb2, &cm, 1, "b.csv", &j);
    ck_assert(!j.throttled && j.fails);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    ck_assert_ptr_nonnull(strstr(j.message, "[at equal SM clocks: 1700 MHz now, 1700 MHz in the baseline]"));
    /* a higher clock now is not held against the case: the same time at
     * 1965 MHz against 1828 is SAME, not 7 % slower */
    const kb_judge_base cb3 = {380.4, 0.002, 0.7974, 0, 1828};
    cm = (kb_judge_round){{381.3, 0.002, 0.7974, 0.7957}, 1965, 1980, 1};
    kb_judge(&go, &cb3, &cm, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SAME);
    ck_assert(j.clock_scale == 1.0);
    cm = (kb_judge_round){{2640, 0.002, 0.1136, 0.1134}, 1900, 1980, 1}; /* but slower code is */
    kb_judge(&go, &cb2, &cm, 1, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER);
    cm.compute_bound = 0; /* memory-bound: clocks are not compared */
    kb_judge(&go, &cb2, &cm, 1, "b.csv", &j);
    ck_assert(isnan(j.clock_scale));
    /* throttled without a baseline: nothing to judge against, no second round */
    j = judge(&NO_ROW, 3000, 0.002, 0.1, 1400, 1980, 0);
    ck_assert(j.throttled && !j.remeasure && !j.fails);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NO_BASELINE);
    ck_assert_ptr_nonnull(strstr(j.message, "NO_BASELINE"));
    /* throttled and not measured: measured again (kb_policy_remeasure) */
    j = judge(&BASE, NAN, NAN, NAN, 1400, 1980, 0);
    ck_assert(j.remeasure);
    ck_assert_int_eq(j.verdict, KB_VERDICT_NONE);
}
END_TEST

/* The floor is per kernel: 1.2 us x the baseline's kernel count. */
START_TEST(judge_floor_per_kernel)
{
    kb_gate_opts o;
    kb_gate_defaults(&o);
    o.floor_ms = 0.0012;
    const double bytes = 40e3;
    kb_judge_base b = {bytes / 5e-6 / 1e9, 0.01, 0.005, 0};
    kb_judge_round m = {{bytes / 7e-6 / 1e9, 0.01, 0.007, NAN}, 1980, 1980}; /* 2 us slower */
    kb_judgement j;
    kb_judge(&o, &b, &m, 0, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SLOWER); /* one kernel: beyond 1.2 us */
    ck_assert_double_eq_tol(j.floor_ms, 0.0012, 1e-15);
    ck_assert(j.remeasure && !j.fails); /* confirmed in a second round */
    kb_judge(&o, &b, &m, 1, "b.csv", &j);
    ck_assert(j.fails);
    b.kernels = 2; /* two kernels: 2.4 us floor, so SAME, and it says why */
    kb_judge(&o, &b, &m, 0, "b.csv", &j);
    ck_assert_int_eq(j.verdict, KB_VERDICT_SAME);
    ck_assert_double_eq_tol(j.floor_ms, 0.0024, 1e-15);
    ck_assert(!j.fails && !j.remeasure);
    ck_assert_str_eq(j.message, "SAME: 7.00 us vs baseline 5.00 us, within the 2.40 us "
                                "launch-jitter floor of 2 kernel(s) (-28.6% GB/s)");
    /* the caller's options are not changed */
    ck_assert_double_eq(o.floor_ms, 0.0012);
}
END_TEST

/* kb_judge agrees with the verdict rule and the policy functions over a grid. */
START_TEST(judge_matches_rule_and_policy)
{
    kb_gate_opts o;
    kb_gate_defaults(&o);
    o.floor_ms = 0.001;
    const double gb[] = {NAN, 1000, 2600, 2900, 3000, 3400};
    const double noise[] = {0.001, 0.03, 0.09};
    const double mhz[] = {1000, 1980};
    const int kernels[] = {0, 1, 3};
    for (size_t a = 0; a < 6; a++)
        for (size_t n = 0; n < 3; n++)
            for (size_t c = 0; c < 2; c++)
                for (size_t k = 0; k < 3; k++)
                    for (int round = 0; round < 2; round++) {
                        kb_judge_base b = {a == 0 ? NAN : 3000, 0.01, 0.01, kernels[k]};
                        const double med = 0.01 * 3000 / gb[a == 0 ? 4 : a];
                        kb_judge_round m = {{gb[a == 0 ? 4 : a], noise[n], med,
                                             med * (a == 2 ? 0.9 : 0.99)},
                                            mhz[c], 1980};
                        kb_judgement j;
                        kb_judge(&o, &b, &m, round, "b.csv", &j);
                        kb_gate_opts g = o;
                        g.floor_ms *= kernels[k] > 0 ? kernels[k] : 1;
                        double ch, bd;
                        kb_perf pb = {b.gbps, b.noise, b.median_ms, NAN};
                        const kb_verdict v = kb_verdict_decide(&g, &pb, &m.now, &ch, &bd);
                        const int th = mhz[c] < 0.75 * 1980;
                        ck_assert_int_eq(j.throttled, th);
                        ck_assert_int_eq(j.remeasure, round == 0 && kb_policy_remeasure(v, th));
                        ck_assert_int_eq(j.verdict, j.remeasure ? v : kb_policy_final(v, th));
                        ck_assert_int_eq(j.fails, !j.remeasure && kb_policy_fails(j.verdict));
                    }
}
END_TEST

START_TEST(names_round_trip)
{
    for (int v = KB_VERDICT_NO_BASELINE; v <= KB_VERDICT_FUSION_CHANGED; v++) {
        kb_verdict back;
        kb_err e;
        ck_assert_int_eq(kb_verdict_parse(kb_verdict_name((kb_verdict)v), &back, &e), KB_OK);
        ck_assert_int_eq(back, v);
    }
    kb_verdict back;
    kb_err e;
    ck_assert_int_eq(kb_verdict_parse("WORSE", &back, &e), KB_ERR_PARSE);
}
END_TEST

Suite *kb_suite_gate(void)
{
    Suite *s = suite_create("gate");
    TCase *t = tcase_create("verdict");
    tcase_add_test(t, identical_is_same);
    tcase_add_test(t, two_percent_is_same);
    tcase_add_test(t, ten_percent_beyond_band);
    tcase_add_test(t, noise_widens_the_band);
    tcase_add_test(t, bimodal_is_noisy);
    tcase_add_test(t, noisy_baseline_keeps_the_gate);
    tcase_add_test(t, missing_baseline);
    tcase_add_test(t, time_floor_for_launch_bound_cases);
    tcase_add_test(t, fastest_sample_decides_slower);
    tcase_add_test(t, judge_bimodal_message);
    tcase_add_test(t, remeasure_throttle_policy);
    tcase_add_test(t, judge_quiet_verdicts);
    tcase_add_test(t, judge_noisy_measured_again);
    tcase_add_test(t, judge_throttled);
    tcase_add_test(t, judge_floor_per_kernel);
    tcase_add_test(t, judge_matches_rule_and_policy);
    tcase_add_test(t, names_round_trip);
    suite_add_tcase(s, t);
    return s;
}
