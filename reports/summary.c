/* summary.csv: the report's geomeans for machines, one row per (benchmark,
 * backend, dtype), through libcsv. Empty field = no value (as in the results
 * schema). Columns:
 *   benchmark,backend,dtype,points,speedup_points,geomean_speedup,
 *   geomean_gbps,geomean_sol_pct,worst_shape,worst_gbps,geomean_mix_sol_pct
 * points = timed shapes; speedup_points = those eager also timed;
 * geomean_mix_sol_pct: % of the SOL for each shape's read:write mix (sol.h). */
#include "report_int.h"
#include "registry.h"

#include <csv.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Quote only when the field needs it, so numbers stay plain; libcsv does the
 * quoting and escaping. */
static void put(FILE *f, const char *s, int last)
{
    if (strpbrk(s, ",\"\r\n")) csv_fwrite(f, s, strlen(s));
    else fputs(s, f);
    fputc(last ? '\n' : ',', f);
}

static void put_num(FILE *f, const char *fmt, double v, int last)
{
    char b[64] = "";
    if (isfinite(v)) snprintf(b, sizeof b, fmt, v);
    put(f, b, last);
}

kb_status kb_report_write_summary_csv(const char *path, const kb_report_model *m, kb_err *e)
{
    FILE *f = fopen(path, "w");
    if (!f) return KB_FAIL(e, KB_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    fputs("benchmark,backend,dtype,points,speedup_points,geomean_speedup,geomean_gbps,"
          "geomean_sol_pct,worst_shape,worst_gbps,geomean_mix_sol_pct\n",
          f);
    for (size_t b = 0; b < m->benches.n; b++)
        for (size_t s = 0; s < m->series.n; s++)
            for (size_t d = 0; d < m->dtypes.n; d++) {
                const char *bench = m->benches.v[b], *be = m->series.v[s], *dt = m->dtypes.v[d];
                if (!kb_report_has(m, bench, dt, be)) continue;
                kb_report_cell c;
                kb_report_cell_get(m, bench, dt, be, &c);
                char n1[32], n2[32], shape[48] = "";
                snprintf(n1, sizeof n1, "%zu", c.points);
                snprintf(n2, sizeof n2, "%zu", c.speedup_points);
                if (isfinite(c.worst_gbps))
                    kb_shape_format(shape, sizeof shape, c.worst.M, c.worst.N, c.worst.K);
                put(f, bench, 0);
                put(f, be, 0);
                put(f, dt, 0);
                put(f, n1, 0);
                put(f, n2, 0);
                put_num(f, "%.4f", c.speedup, 0);
                put_num(f, "%.1f", c.gbps, 0);
                put_num(f, "%.2f", c.sol_pct, 0);
                put(f, shape, 0);
                put_num(f, "%.1f", c.worst_gbps, 0);
                put_num(f, "%.2f", c.mix_sol_pct, 1);
            }
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return KB_FAIL(e, KB_ERR_IO, "write error on %s: %s", path, strerror(errno));
    return KB_OK;
}
