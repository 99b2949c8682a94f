/* report.md's verdict sections: the rows judged slower, noisy or faster
 * than the baseline (with why), the kernel-count changes, the accuracy
 * failures and the skipped cases. markdown.c writes the rest and calls
 * these in order. */
#include "md_int.h"

#include <string.h>

static void regression_row(FILE *f, const kb_report_judged *j)
{
    char name[256], b1[64], b2[64], b3[64], b4[64];
    kb_report_case_name(j->row, name, sizeof name);
    fprintf(f, "| ");
    md_text(f, name);
    fprintf(f, " | %s | %s | %s | %s | %s | ", num(b1, sizeof b1, "%.0f", j->base_gbps),
            num(b2, sizeof b2, "%.0f", j->row->gbps), num(b3, sizeof b3, "%+.1f%%", 100 * j->change),
            num(b4, sizeof b4, "%.1f%%", 100 * j->noise), j->verdict);
    /* Why: the run's own reason (a NOISY case's clock, noise or slow
     * samples), without the verdict it repeats; none for a verdict the
     * report reached itself (the run's message is about another). */
    const char *why = strcmp(j->verdict, j->row->verdict) == 0 ? j->row->message : "";
    const size_t vl = strlen(j->verdict);
    if (strncmp(why, j->verdict, vl) == 0 && why[vl] == ':') why += vl + 1 + (why[vl + 1] == ' ');
    md_text(f, why[0] ? why : DASH);
    fprintf(f, " |\n");
}

static void regression_table(FILE *f, const kb_report_model *m, const kb_report_judged *j,
                             const char *const *verdicts, size_t nv)
{
    fprintf(f, "| case | baseline GB/s | now GB/s | change | noise | verdict | why |\n"
               "|---|--:|--:|--:|--:|---|---|\n");
    for (size_t v = 0; v < nv; v++)
        for (size_t i = 0; i < m->rows.n; i++)
            if (j[i].verdict && strcmp(j[i].verdict, verdicts[v]) == 0) regression_row(f, &j[i]);
    fprintf(f, "\n");
}

/* Cases whose kernel count changed: the kernels they launched now (the
 * expected count and the baseline's list are in the run's log). */
static void fusion_table(FILE *f, const kb_report_model *m, const kb_report_judged *j)
{
    char name[256];
    fprintf(f, "Kernel count changed (FUSION_CHANGED): the count differs from the one the "
               "backend declares or the baseline row records.\n\n"
               "| case | kernels now | kernels launched |\n|---|--:|---|\n");
    for (size_t i = 0; i < m->rows.n; i++) {
        if (!j[i].verdict || strcmp(j[i].verdict, "FUSION_CHANGED") != 0) continue;
        kb_report_case_name(j[i].row, name, sizeof name);
        fprintf(f, "| ");
        md_text(f, name);
        fprintf(f, " | %d | ", j[i].row->kernels);
        for (const char *s = j[i].row->kernel_names; *s; s++) {
            if (*s == '<' || *s == '>') fputs(*s == '<' ? "&lt;" : "&gt;", f);
            else if (*s == ';') fputs("; ", f);
            else md_text(f, (char[2]){*s, 0});
        }
        fprintf(f, " |\n");
    }
    fprintf(f, "\n");
}

void kb_md_write_regressions(FILE *f, const kb_report_model *m, const kb_report_judged *j,
                             const kb_md_counts *c, const kb_report_baseline_info *bl)
{
    size_t compared = c->slower + c->faster + c->same + c->noisy + c->fusion;
    const char *baseline_name = bl->name;
    fprintf(f, "## Regressions vs baseline\n\n");
    if (bl->gpu_note[0]) {
        fprintf(f, "**Warning:** ");
        md_text(f, bl->gpu_note);
        fprintf(f, ".\n\n");
    }
    if (bl->missing) {
        fprintf(f, "Baseline `%s` not found: nothing to compare with beyond the run's own "
                   "verdicts. ",
                baseline_name);
        baseline_name = NULL;
    }
    if (c->verdicts)
        fprintf(f, "Verdicts recorded by the run (its own baseline check) are used as they are. ");
    if (baseline_name)
        fprintf(f, "%s compared with `%s`: slower when GB/s is more than %.0f%% + "
                   "2\xc3\x97\xe2\x88\x9a(noise\xc2\xb2 + baseline noise\xc2\xb2) below "
                   "the baseline; noisy when the run's noise exceeds 5%%. kbench's launch-jitter "
                   "time floor is not applied here (results files do not record it): a "
                   "launch-bound case of a few \xc2\xb5s may read slower or faster where kbench "
                   "would say same. ",
                c->verdicts ? "Rows without a verdict are" : "Rows are", baseline_name,
                100 * m->tol);
    if (!compared) {
        if (c->verdicts || baseline_name)
            fprintf(f, "\n\nNo case could be compared: no baseline row matches the results.\n\n");
        else
            fprintf(f, "Not checked: no baseline file given (--baseline) and the results carry "
                       "no verdicts.\n\n");
        return;
    }
    fprintf(f, "%zu compared: %zu slower, %zu faster, %zu same, %zu noisy", compared, c->slower,
            c->faster, c->same, c->noisy);
    if (c->fusion) fprintf(f, ", %zu FUSION_CHANGED", c->fusion);
    fprintf(f, "; %zu without a baseline.\n\n", c->nobase);
    if (c->fusion) fusion_table(f, m, j);
    static const char *const bad[] = {"SLOWER", "NOISY"};
    static const char *const good[] = {"FASTER"};
    if (c->slower + c->noisy) regression_table(f, m, j, bad, 2);
    else fprintf(f, "No case is slower than its baseline.\n\n");
    if (c->faster) {
        fprintf(f, "<details><summary>%zu faster than the baseline</summary>\n\n", c->faster);
        regression_table(f, m, j, good, 1);
        fprintf(f, "</details>\n\n");
    }
}

void kb_md_write_accuracy(FILE *f, const kb_report_model *m, const kb_md_counts *c)
{
    char name[256], b1[64], b2[64];
    fprintf(f, "## Accuracy failures\n\n");
    if (!c->fails && !c->peer_fails) {
        fprintf(f, "None: every checked case matches the fp32 reference within tolerance.\n\n");
    } else {
        fold_open(f, c->fails + c->peer_fails, "accuracy failures");
        fprintf(f, "| case | mismatches | worst error / tolerance | note |\n|---|--:|--:|---|\n");
        for (size_t i = 0; i < m->rows.n; i++) {
            const kb_result *x = &m->rows.v[i];
            if (!is_fail(x)) continue;
            kb_report_case_name(x, name, sizeof name);
            fprintf(f, "| ");
            md_text(f, name);
            fprintf(f, " | %s | %s | ",
                    num(b2, sizeof b2, "%.0f", x->mismatches >= 0 ? (double)x->mismatches : NAN),
                    num(b1, sizeof b1, "%.3g", x->max_err));
            md_text(f, x->message[0] ? x->message : kb_report_is_peer(x->backend) ? "peer" : DASH);
            fprintf(f, " |\n");
        }
        fprintf(f, "\n");
        fold_close(f, c->fails + c->peer_fails);
    }
    fprintf(f, "## Skipped\n\n");
    if (!c->untimed) {
        fprintf(f, "None.\n\n");
        return;
    }
    fold_open(f, c->untimed, "skipped or untimed cases");
    fprintf(f, "| case | reason |\n|---|---|\n");
    for (size_t i = 0; i < m->rows.n; i++) {
        const kb_result *x = &m->rows.v[i];
        if (kb_report_timed(x)) continue;
        kb_report_case_name(x, name, sizeof name);
        fprintf(f, "| ");
        md_text(f, name);
        fprintf(f, " | ");
        if (x->message[0]) md_text(f, x->message);
        else if (strncmp(x->config, "inputs=", 7) == 0)
            fprintf(f, "accuracy %s; an input-kind case is not timed", kb_acc_name(x->accuracy));
        else
            fprintf(f, "%s (no reason in the input)",
                    x->accuracy != KB_ACC_NONE ? kb_acc_name(x->accuracy) : "not timed");
        fprintf(f, " |\n");
    }
    fprintf(f, "\n");
    fold_close(f, c->untimed);
}
