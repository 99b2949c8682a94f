/* Order statistics of timing samples. */
#include <math.h>
#include <stdlib.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (numpy's default). */
static double quantile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

void kb_stats(double *ms, int n, kb_timing *out)
{
    kb_timing t = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0, 0};
    if (n <= 0) {
        *out = t;
        return;
    }
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++) sum += ms[i];
    t.samples = n;
    t.min_ms = ms[0];
    t.max_ms = ms[n - 1];
    t.mean_ms = sum / n;
    t.median_ms = quantile(ms, n, 0.5);
    t.q1_ms = quantile(ms, n, 0.25);
    t.q3_ms = quantile(ms, n, 0.75);
    double *dev = malloc(sizeof *dev * (size_t)n);
    if (dev) {
        for (int i = 0; i < n; i++) dev[i] = fabs(ms[i] - t.median_ms);
        qsort(dev, (size_t)n, sizeof *dev, cmp_double);
        double mad = quantile(dev, n, 0.5);
        t.noise = t.median_ms > 0 ? 1.4826 * mad / t.median_ms : NAN;
        free(dev);
    }
    *out = t;
}

int kb_settle_step(kb_settle *st, double probe_ms, double tol, int need)
{
    if (!(probe_ms > 0)) { /* no reading: not calm, and no new reference */
        st->calm = 0;
        return 0;
    }
    if (!(st->ref_ms > 0) || probe_ms < st->ref_ms) st->ref_ms = probe_ms;
    st->calm = probe_ms <= st->ref_ms * (1 + tol) ? st->calm + 1 : 0;
    return st->calm >= need;
}
