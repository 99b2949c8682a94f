/* report.md: written for a CI job summary or a PR comment, so the verdicts
 * (regressions, accuracy) come first as one list, the numbers follow in
 * tables, and the long per-shape tables are folded (<details>). Nothing in
 * it depends on the clock, so a golden file can pin it byte for byte. The
 * sections of verdicts (regressions, accuracy failures, skipped cases) are
 * md_verdicts.c's. */
#include "md_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"

/* Where plot links point: plots/ beside report.md, or under opts->image_base
 * (an URL) where report.md is published without its folder. */
static void plot_link(FILE *f, const kb_report_model *m, const char *stem, const char *ext)
{
    const char *base = m->image_base ? m->image_base : "";
    size_t n = strlen(base);
    fprintf(f, "%s%splots/%s.%s", base, n && base[n - 1] != '/' ? "/" : "", stem, ext);
}


static void list_series(FILE *f, const kb_report_model *m, int peers)
{
    int first = 1;
    for (size_t s = 0; s < m->series.n; s++) {
        if (kb_report_is_peer(m->series.v[s]) != peers) continue;
        fputs(first ? "" : ", ", f);
        md_text(f, m->series.v[s]);
        first = 0;
    }
}

static kb_md_counts count_all(const kb_report_model *m, const kb_report_judged *j)
{
    kb_md_counts c;
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        c.rows++;
        if (kb_report_timed(x)) c.timed++;
        else c.untimed++;
        if (is_fail(x)) {
            if (kb_report_is_peer(x->backend)) c.peer_fails++;
            else c.fails++;
        }
        if (x->accuracy == KB_ACC_PASS || x->accuracy == KB_ACC_FAIL) c.acc_checked++;
        if (x->verdict[0]) c.verdicts++;
        const char *v = j[i].verdict;
        if (!v) continue;
        if (strcmp(v, "SLOWER") == 0) c.slower++;
        else if (strcmp(v, "FASTER") == 0) c.faster++;
        else if (strcmp(v, "SAME") == 0) c.same++;
        else if (strcmp(v, "NOISY") == 0) c.noisy++;
        else if (strcmp(v, "FUSION_CHANGED") == 0) c.fusion++;
        else c.nobase++;
    }
    return c;
}

/* " (`name`)": the baseline file given to the report, named wherever the
 * overview speaks of the baseline (a report that says "the baseline" when
 * the reader cannot tell which was given reads as the default). */
static void baseline_ref(FILE *f, const kb_report_baseline_info *bl, const char *pre)
{
    if (!bl->name || bl->missing) return;
    fprintf(f, "%s`", pre);
    md_text(f, bl->name);
    fputc('`', f);
}

static void write_overview(FILE *f, const kb_report_model *m, const kb_md_counts *c,
                           const kb_report_baseline_info *bl, const kb_plot_result *plots)
{
    char b[64];
    size_t compared = c->slower + c->faster + c->same + c->noisy + c->fusion;
    if (!compared && !c->acc_checked)
        fprintf(f, "- **Nothing verified:** no case's accuracy was checked (PASS or FAIL) and "
                   "no case's speed was compared with a baseline.\n");
    if (c->fusion) {
        fprintf(f, "- **Regressions: %zu** of %zu cases compared", c->slower + c->fusion,
                compared);
        baseline_ref(f, bl, " with ");
        fprintf(f, ": %zu slower than the baseline, "
                   "%zu launching a different number of kernels (FUSION_CHANGED) "
                   "([details](#regressions-vs-baseline)).\n",
                c->slower, c->fusion);
    } else if (c->slower) {
        fprintf(f, "- **Regressions: %zu** of %zu cases compared are slower than the baseline",
                c->slower, compared);
        baseline_ref(f, bl, " ");
        fprintf(f, " ([details](#regressions-vs-baseline)).\n");
    } else if (compared) {
        fprintf(f, "- **Regressions: none** (%zu cases compared with the baseline", compared);
        baseline_ref(f, bl, " ");
        fprintf(f, ").\n");
    } else if (bl->name && !bl->missing) {
        fprintf(f, "- **Regressions:** not checked: ");
        baseline_ref(f, bl, "");
        if (bl->matched)
            fprintf(f, " has rows for %zu kbench case%s, none of them timed, and the results "
                       "carry no verdicts.\n",
                    bl->matched, bl->matched == 1 ? "" : "s");
        else
            fprintf(f, " has no row for any kbench case in the results, and they carry no "
                       "verdicts.\n");
    } else if (bl->name) {
        fprintf(f, "- **Regressions:** not checked (baseline `");
        md_text(f, bl->name);
        fprintf(f, "` not found, and no verdicts in the results).\n");
    } else
        fprintf(f, "- **Regressions:** not checked (no baseline and no verdicts in the results).\n");
    /* Peers' failures are information, not kbench's problem: kept apart. */
    if (c->fails)
        fprintf(f, "- **Accuracy: %zu failure%s** against the fp32 reference "
                   "([details](#accuracy-failures))",
                c->fails, c->fails == 1 ? "" : "s");
    else if (!c->acc_checked)
        fprintf(f, "- **Accuracy:** not checked (no row has PASS or FAIL)");
    else
        fprintf(f, "- **Accuracy:** no failures");
    if (c->peer_fails)
        fprintf(f, "%s%zu in peers' results", c->fails ? "; " : " in kbench's backends; ",
                c->peer_fails);
    fprintf(f, ".\n");
    fprintf(f, "- **Cases:** %zu (%zu timed, %zu skipped or not timed) over %zu benchmark%s.\n",
            c->rows, c->timed, c->untimed, m->benches.n, m->benches.n == 1 ? "" : "s");
    size_t peers = 0;
    for (size_t s = 0; s < m->series.n; s++) peers += (size_t)kb_report_is_peer(m->series.v[s]);
    fprintf(f, "- **Series:** ");
    if (peers < m->series.n) list_series(f, m, 0);
    if (peers) {
        fprintf(f, peers < m->series.n ? "; peers: " : "peers only: ");
        list_series(f, m, 1);
    }
    fprintf(f, ".\n");
    if (isfinite(m->sol_gbps))
        fprintf(f, "- **Speed of light:** %s GB/s (device-to-device copy, read + write bytes; a "
                   "measured reference, not a hard ceiling: a kernel with another read:write "
                   "mix, or whose small outputs stay in L2, can pass it by a few per cent).\n",
                num(b, sizeof b, "%.0f", m->sol_gbps));
    else
        fprintf(f, "- **Speed of light:** unknown (no sol_gbps in the results): %% of SOL "
                   "not shown.\n");
    if (isfinite(m->sol_gbps) && isfinite(m->read_gbps) && isfinite(m->write_gbps)) {
        char br[64], bw[64];
        fprintf(f, "- **SOL by traffic mix:** read-only stream %s GB/s, write-only %s GB/s. A "
                   "case reading R and writing W bytes (its byte model) has the SOL (R + W) / t, "
                   "t = 2 min(R,W) / copy + |R - W| / (read-only if R > W, else write-only): "
                   "paired bytes stream as a copy, the rest one way. \"%% mix SOL\" is GB/s as "
                   "%% of it.\n",
                num(br, sizeof br, "%.0f", m->read_gbps), num(bw, sizeof bw, "%.0f", m->write_gbps));
    }
    switch (plots->state) {
    case KB_PLOTS_OFF: fprintf(f, "- **Plots:** not drawn (turned off).\n"); break;
    case KB_PLOTS_DRAWN: break;
    case KB_PLOTS_NO_GNUPLOT:
    case KB_PLOTS_FAILED: fprintf(f, "- **Plots:** %s\n", plots->detail); break;
    }
    /* Rows from several GPUs: every one named, with its share of the rows. */
    if (m->gpus.n > 1) {
        fprintf(f, "- **GPUs:** the input mixes %zu: ", m->gpus.n);
        for (size_t g = 0; g < m->gpus.n; g++) {
            size_t k = 0;
            for (size_t i = 0; i < m->rows.n; i++) k += strcmp(m->rows.v[i].gpu, m->gpus.v[g]) == 0;
            fputs(g ? ", " : "", f);
            md_text(f, m->gpus.v[g]);
            fprintf(f, " (%zu row%s)", k, k == 1 ? "" : "s");
        }
        fprintf(f, "; numbers from different GPUs do not compare.\n");
    }
    /* Where the numbers came from: dates and versions of the input rows. */
    const char *lo = NULL, *hi = NULL;
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        if (x->date[0] && (!lo || strcmp(x->date, lo) < 0)) lo = x->date;
        if (x->date[0] && (!hi || strcmp(x->date, hi) > 0)) hi = x->date;
    }
    const int ver = m->versions.n > 0;
    if (lo || ver) {
        fprintf(f, "- **Input:** ");
        if (ver) fprintf(f, "kbench ");
        for (size_t v = 0; v < m->versions.n; v++) {
            fputs(v ? ", " : "", f);
            md_text(f, m->versions.v[v]);
        }
        if (m->versions.n > 1) fprintf(f, " (mixed)");
        if (lo && ver) fprintf(f, ", ");
        if (lo && strcmp(lo, hi) == 0) fprintf(f, "run %s", lo);
        else if (lo) fprintf(f, "runs %s to %s", lo, hi);
        if (m->replaced)
            fprintf(f, "; %zu duplicate row%s replaced by later input", m->replaced,
                    m->replaced == 1 ? "" : "s");
        fprintf(f, ".\n");
    }
    fprintf(f, "\n");
}

/* The one table a reviewer reads: benchmark x backend speedups. */
static void write_speedup_matrix(FILE *f, const kb_report_model *m)
{
    fprintf(f, "| benchmark | dtype |");
    for (size_t s = 0; s < m->series.n; s++)
        if (strcmp(m->series.v[s], m->ref) != 0) {
            fputc(' ', f);
            md_text(f, m->series.v[s]);
            fprintf(f, " |");
        }
    fprintf(f, "\n|---|---|");
    for (size_t s = 0; s < m->series.n; s++)
        if (strcmp(m->series.v[s], m->ref) != 0) fprintf(f, "--:|");
    fprintf(f, "\n");
    for (size_t b = 0; b < m->benches.n; b++)
        for (size_t d = 0; d < m->dtypes.n; d++) {
            const char *bench = m->benches.v[b], *dt = m->dtypes.v[d];
            if (!kb_report_has(m, bench, dt, NULL)) continue;
            double best = NAN;
            for (size_t s = 0; s < m->series.n; s++) {
                if (strcmp(m->series.v[s], m->ref) == 0) continue;
                double g = kb_report_index_speedup(&m->ix, bench, dt, m->ref, m->series.v[s],
                                                   NULL);
                if (isfinite(g) && !(g <= best)) best = g;
            }
            fprintf(f, "| ");
            md_text(f, bench);
            fprintf(f, " | %s |", dt);
            for (size_t s = 0; s < m->series.n; s++) {
                if (strcmp(m->series.v[s], m->ref) == 0) continue;
                if (!kb_report_has(m, bench, dt, m->series.v[s])) {
                    fprintf(f, " |");
                    continue;
                }
                double g = kb_report_index_speedup(&m->ix, bench, dt, m->ref, m->series.v[s],
                                                   NULL);
                if (!isfinite(g)) fprintf(f, " " DASH " |");
                else if (g == best) fprintf(f, " **%.2fx** |", g);
                else fprintf(f, " %.2fx |", g);
            }
            fprintf(f, "\n");
        }
    fprintf(f, "\n");
}

static void write_summary(FILE *f, const kb_report_model *m)
{
    char b1[64], b2[64], b3[64];
    fprintf(f, "## Summary\n\n"
               "Geomean over shapes of %s latency / backend latency, counting only the "
               "shapes both timed; best per row in bold.\n\n", m->ref);
    write_speedup_matrix(f, m);
    fprintf(f, "Per backend: geomeans over the shapes it timed (\xe2\x9c\x97 = accuracy failures "
               "among them); speedup over the shapes %s also timed (n, when fewer). Worst "
               "shape = lowest GB/s. Best GB/s per benchmark in bold.\n\n", m->ref);
    size_t nrows = 0;
    for (size_t b = 0; b < m->benches.n; b++)
        for (size_t d = 0; d < m->dtypes.n; d++)
            for (size_t s = 0; s < m->series.n; s++)
                nrows += (size_t)kb_report_has(m, m->benches.v[b], m->dtypes.v[d], m->series.v[s]);
    fold_open(f, nrows, "per backend: speedup, GB/s, % of SOL, % mix SOL, worst shape");
    fprintf(f, "| benchmark | dtype | backend | shapes | speedup vs %s | GB/s | %% of SOL "
               "| %% mix SOL | worst shape (GB/s) |\n", m->ref);
    fprintf(f, "|---|---|---|--:|--:|--:|--:|--:|---|\n");
    for (size_t b = 0; b < m->benches.n; b++)
        for (size_t d = 0; d < m->dtypes.n; d++) {
            const char *bench = m->benches.v[b], *dt = m->dtypes.v[d];
            if (!kb_report_has(m, bench, dt, NULL)) continue;
            /* A backend with accuracy failures is not crowned best. */
            double best = NAN;
            for (size_t s = 0; s < m->series.n; s++) {
                kb_report_cell c;
                kb_report_cell_get(m, bench, dt, m->series.v[s], &c);
                if (!c.fails && isfinite(c.gbps) && !(c.gbps <= best)) best = c.gbps;
            }
            for (size_t s = 0; s < m->series.n; s++) {
                if (!kb_report_has(m, bench, dt, m->series.v[s])) continue;
                kb_report_cell c;
                kb_report_cell_get(m, bench, dt, m->series.v[s], &c);
                fprintf(f, "| ");
                md_text(f, bench);
                fprintf(f, " | %s | ", dt);
                md_text(f, m->series.v[s]);
                fprintf(f, " | %zu", c.points);
                if (c.fails) fprintf(f, " (%zu \xe2\x9c\x97)", c.fails);
                fprintf(f, " | ");
                if (isfinite(c.speedup)) {
                    fprintf(f, "%.2fx", c.speedup);
                    if (c.speedup_points < c.points) fprintf(f, " (n=%zu)", c.speedup_points);
                } else {
                    fputs(DASH, f);
                }
                int bold = !c.fails && isfinite(c.gbps) && c.gbps == best;
                fprintf(f, " | %s%s%s | %s | ", bold ? "**" : "",
                        num(b1, sizeof b1, "%.0f", c.gbps), bold ? "**" : "",
                        num(b2, sizeof b2, "%.1f%%", c.sol_pct));
                fprintf(f, "%s | ", num(b2, sizeof b2, "%.1f%%", c.mix_sol_pct));
                if (isfinite(c.worst_gbps)) {
                    kb_shape_format(b2, sizeof b2, c.worst.M, c.worst.N, c.worst.K);
                    fprintf(f, "%s (%s)", b2, num(b3, sizeof b3, "%.0f", c.worst_gbps));
                } else {
                    fputs(DASH, f);
                }
                fprintf(f, " |\n");
            }
        }
    fprintf(f, "\n");
    fold_close(f, nrows);
    for (size_t b = 0; b < m->benches.n; b++)
        for (size_t d = 0; d < m->dtypes.n; d++) {
            const char *bench = m->benches.v[b], *dt = m->dtypes.v[d];
            if (!kb_report_has(m, bench, dt, NULL)) continue;
            kb_report_cell c;
            kb_report_cell_get(m, bench, dt, m->ref, &c);
            if (c.points == 0)
                fprintf(f, "No %s results for %s %s: speedups not computed.\n\n", m->ref, bench,
                        dt);
        }
}

static kb_status write_benchmark(FILE *f, const kb_report_model *m, const char *bench,
                                 const kb_plot_result *plots, kb_err *e)
{
    char b1[64], stem[160];
    fprintf(f, "## %s\n\n", bench);
    for (size_t d = 0; d < m->dtypes.n; d++) {
        const char *dt = m->dtypes.v[d];
        if (!kb_report_has(m, bench, dt, NULL)) continue;
        if (plots->state == KB_PLOTS_DRAWN || plots->state == KB_PLOTS_FAILED) {
            if (kb_report_plottable(m, bench, dt)) {
                kb_report_plot_stem(bench, dt, stem, sizeof stem);
                fprintf(f, "![%s %s: GB/s by shape](", bench, dt);
                plot_link(f, m, stem, "png");
                fprintf(f, ")\n\n[SVG](");
                plot_link(f, m, stem, "svg");
                fprintf(f, ") \xc2\xb7 [data](");
                plot_link(f, m, stem, "dat");
                fprintf(f, ") \xc2\xb7 [gnuplot script](");
                plot_link(f, m, stem, "gp");
                fprintf(f, ")\n\n");
            }
        }
        kb_mn *shapes;
        size_t ns;
        KB_TRY(kb_report_shapes(m, bench, dt, &shapes, &ns, e));
        kb_bench_id bid;
        const int compute = kb_bench_find(bench, &bid, NULL) == KB_OK &&
                            kb_bench_info_get(bid)->flops_mnk > 0;
        fprintf(f, "<details><summary>%s %s: %s per shape (best in bold, \xe2\x9c\x97 = accuracy "
                   "failure%s)</summary>\n\n",
                bench, dt, compute ? "TFLOP/s" : "GB/s",
                compute ? "; % of SOL: of the measured bf16 GEMM peak" : "");
        fprintf(f, "| shape |");
        for (size_t s = 0; s < m->series.n; s++)
            if (kb_report_has(m, bench, dt, m->series.v[s])) {
                fputc(' ', f);
                md_text(f, m->series.v[s]);
                fprintf(f, " |");
            }
        fprintf(f, " best %% of SOL | best %% mix SOL |\n|---|");
        for (size_t s = 0; s < m->series.n; s++)
            if (kb_report_has(m, bench, dt, m->series.v[s])) fprintf(f, "--:|");
        fprintf(f, "--:|--:|\n");
        for (size_t k = 0; k < ns; k++) {
            const kb_result *best = NULL;
            for (size_t s = 0; s < m->series.n; s++) {
                const kb_result *x =
                    kb_report_find(m, bench, m->series.v[s], dt, shapes[k].M, shapes[k].N, shapes[k].K);
                if (x && kb_report_timed(x) && !is_fail(x) && isfinite(x->gbps) &&
                    (!best || x->gbps > best->gbps))
                    best = x;
            }
            char shape[72];
            kb_shape_format(shape, sizeof shape, shapes[k].M, shapes[k].N, shapes[k].K);
            fprintf(f, "| %s |", shape);
            for (size_t s = 0; s < m->series.n; s++) {
                if (!kb_report_has(m, bench, dt, m->series.v[s])) continue;
                const kb_result *x =
                    kb_report_find(m, bench, m->series.v[s], dt, shapes[k].M, shapes[k].N, shapes[k].K);
                if (!x) fprintf(f, " |");
                else if (!kb_report_timed(x)) fprintf(f, " skip |");
                else {
                    int bold = best && x->gbps == best->gbps;
                    /* A compute-bound op (mlp_forward) in TFLOP/s. */
                    const int fl = isfinite(x->tflops) && x->tflops > 0;
                    fprintf(f, " %s%s%s%s |", bold ? "**" : "",
                            fl ? num(b1, sizeof b1, "%.1f", x->tflops)
                               : num(b1, sizeof b1, "%.0f", x->gbps),
                            bold ? "**" : "", is_fail(x) ? " \xe2\x9c\x97" : "");
                }
            }
            fprintf(f, " %s |", best ? num(b1, sizeof b1, "%.1f%%", best->sol_pct) : DASH);
            fprintf(f, " %s |\n", best ? num(b1, sizeof b1, "%.1f%%", best->mix_sol_pct) : DASH);
        }
        fprintf(f, "\n</details>\n\n");
        free(shapes);
    }
    return KB_OK;
}

void kb_report_put_utf8(FILE *f, const char *s, size_t n)
{
    size_t i = 0, run = 0; /* s[i - run, i): valid, not yet written */
    while (i < n) {
        const size_t k = kb_utf8_len(s + i);
        if (k && k <= n - i) {
            i += k;
            run += k;
            continue;
        }
        fwrite(s + i - run, 1, run, f);
        fputs("\xef\xbf\xbd", f); /* U+FFFD REPLACEMENT CHARACTER */
        run = 0;
        i++;
    }
    fwrite(s + i - run, 1, run, f);
}

static kb_status write_report(FILE *f, const kb_report_model *m, const kb_report_judged *j,
                              const kb_report_baseline_info *bl, const kb_plot_result *plots,
                              kb_err *e)
{
    kb_md_counts c = count_all(m, j);
    fprintf(f, "# kbench report%s", m->gpu[0] ? ": " : "");
    md_text(f, m->gpu);
    fprintf(f, "\n\n");
    write_overview(f, m, &c, bl, plots);
    kb_report_write_gpu_cmp(f, &m->gpu_cmp);
    write_summary(f, m);
    for (size_t b = 0; b < m->benches.n; b++)
        KB_TRY(write_benchmark(f, m, m->benches.v[b], plots, e));
    KB_TRY(kb_report_write_kernels(f, m, e));
    kb_md_write_regressions(f, m, j, &c, bl);
    kb_md_write_accuracy(f, m, &c);
    fprintf(f, "---\nWritten by kbench-report from %zu result rows.\n", m->rows.n);
    return KB_OK;
}

/* Written whole into memory first, then to f through kb_report_put_utf8:
 * every field of every section (names, messages, GPU, versions) comes out
 * UTF-8 without each printf having to remember it. */
kb_status kb_report_write_markdown(FILE *f, const kb_report_model *m,
                                   const kb_report_judged *j, const kb_report_baseline_info *bl,
                                   const kb_plot_result *plots, kb_err *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem) return KB_FAIL(e, KB_ERR_NOMEM, "report.md: %s", strerror(errno));
    kb_status st = write_report(mem, m, j, bl, plots, e);
    const int bad = ferror(mem);
    if (fclose(mem) != 0 && st == KB_OK) st = KB_FAIL(e, KB_ERR_NOMEM, "report.md: out of host memory");
    if (bad && st == KB_OK) st = KB_FAIL(e, KB_ERR_NOMEM, "report.md: out of host memory");
    if (st == KB_OK) kb_report_put_utf8(f, buf, len);
    free(buf);
    if (st == KB_OK && ferror(f)) st = KB_FAIL(e, KB_ERR_IO, "write error on report.md");
    return st;
}
