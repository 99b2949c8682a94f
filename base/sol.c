/* Speed of light by traffic mix: the model in sol.h. */
#include "sol.h"

#include <math.h>

#include "registry.h"

static int known(double gbps) { return isfinite(gbps) && gbps > 0; }

double kb_sol_mix_gbps(double read_bytes, double write_bytes, const kb_sol_streams *s)
{
    const double R = read_bytes, W = write_bytes;
    if (!(R >= 0) || !(W >= 0) || !(R + W > 0) || !known(s->copy_gbps)) return NAN;
    const double paired = R < W ? R : W, rest = fabs(R - W);
    const double one_way = R > W ? s->read_gbps : s->write_gbps;
    if (rest > 0 && !known(one_way)) return NAN;
    const double t = 2 * paired / s->copy_gbps + (rest > 0 ? rest / one_way : 0);
    return (R + W) / t;
}

double kb_bytes_written(const kb_problem *p)
{
    if (!kb_bench_info_get(p->bench)) return 0;
    return (double)kb_out_rows(p) * (double)kb_out_cols(p) * (double)kb_dtype_size(p->dtype) +
           (double)kb_tensor_bytes(p, KB_T_DW);
}

double kb_bytes_read(const kb_problem *p)
{
    const double r = kb_bytes_moved(p) - kb_bytes_written(p);
    return r > 0 ? r : 0;
}

double kb_sol_mix_for(const kb_problem *p, const kb_sol_streams *s)
{
    return kb_sol_mix_gbps(kb_bytes_read(p), kb_bytes_written(p), s);
}
