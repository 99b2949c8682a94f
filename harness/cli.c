/* Command-line parsing: flags as PyTorch's genai_layers benchmark spells
 * them first, then kbench's own. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void kb_cli_usage(FILE *f)
{
    fputs("usage: kbench [options] [benchmark ...]\n"
          "       kbench --all | --list | --list-cases | --case NAME | --self-test\n"
          "\n"
          "selection:\n"
          "  --all                      run every benchmark\n"
          "  --list                     list benchmarks and the backends implementing them\n"
          "  --backend B[,B]            eager, fused, tuned, cudnn (default: all registered)\n"
          "  --shape MxN                run this shape (repeatable) instead of the sweep\n"
          "  --dtype D[,D]              bf16, fp16, fp32 (default bf16)\n"
          "  --sweep default|odd|short|all  registered shape lists to run (default: default)\n"
          "  --inputs K[,K]             input kinds: randn (default), shifted, wide, masked,\n"
          "                             constant, small (a kind runs its registered shapes\n"
          "                             and dtypes unless --shape/--dtype say otherwise)\n"
          "accuracy and output:\n"
          "  --tolerance T              atol = rtol = T instead of the per-dtype defaults\n"
          "  --exit-on-accuracy-failure stop at the first accuracy failure (exit 1)\n"
          "  --print-benchmark-result   one line per result\n"
          "  --csv FILE, --json FILE    write the results\n"
          "  --dump DIR                 write each case's inputs, outputs and gold as .npy\n"
          "  --visualize                write the report and plots after the run\n"
          "  --report-dir DIR           where --visualize writes (default kbench-report)\n"
          "baselines:\n"
          "  --baseline FILE            baseline CSV (default baselines/<gpu>.csv)\n"
          "  --update-baseline          merge this run's rows into the baseline file\n"
          "  --perf-tolerance P         allowed GB/s drop before SLOWER (default 0.10)\n"
          "tuned backend:\n"
          "  --tune                     run the launch-parameter search, store it in the cache\n"
          "  --tune-cache FILE          cache file (default baselines/tuning/<gpu>.txt)\n"
          "  --tuned-config NAME:k=v,.. a named launch configuration, its own series\n"
          "other:\n"
          "  --device N                 CUDA device (default: CTest's allocation, else 0)\n"
          "  --budget-ms MS             wall-clock timing budget per case (default 1500)\n"
          "  --no-timing                check accuracy only\n"
          "  --case NAME                run one CTest case <bench>.<backend>.<dtype>.<M>x<N>[.<inputs>]\n"
          "  --list-cases               print every CTest case with its labels\n"
          "  --self-test                check the GPU reference against the CPU reference\n"
          "exit: 0 pass, 1 failure, 2 usage error, 77 skipped (no GPU)\n",
          f);
}

static kb_status need_value(int argc, char **argv, int *i, const char **v, kb_err *e)
{
    if (*i + 1 >= argc) return KB_FAIL(e, KB_ERR_ARG, "option %s needs a value", argv[*i]);
    *v = argv[++*i];
    return KB_OK;
}

static kb_status parse_double(const char *flag, const char *s, double lo, double hi,
                              double *out, kb_err *e)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v >= lo && v <= hi))
        return KB_FAIL(e, KB_ERR_ARG, "%s: '%s' is not a number in [%g, %g]", flag, s, lo, hi);
    *out = v;
    return KB_OK;
}

/* Comma-separated list, each item through fn. */
static kb_status each_item(const char *list, kb_status (*fn)(const char *, kb_options *, kb_err *),
                           kb_options *o, kb_err *e)
{
    char buf[256];
    if (strlen(list) >= sizeof buf) return KB_FAIL(e, KB_ERR_ARG, "list too long: '%s'", list);
    strcpy(buf, list);
    char *save = NULL;
    int n = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), n++)
        KB_TRY(fn(t, o, e));
    if (n == 0) return KB_FAIL(e, KB_ERR_ARG, "empty list '%s'", list);
    return KB_OK;
}

static kb_status add_backend(const char *s, kb_options *o, kb_err *e)
{
    int b = kb_backend_index(s);
    if (b < 0)
        return KB_FAIL(e, KB_ERR_ARG, "Unknown backend '%s' (expected eager, fused, tuned or cudnn)",
                       s);
    o->backend[b] = 1;
    return KB_OK;
}

static kb_status add_dtype(const char *s, kb_options *o, kb_err *e)
{
    kb_dtype d;
    KB_TRY(kb_dtype_parse(s, &d, e));
    o->dtype[d] = 1;
    return KB_OK;
}

static kb_status add_custom(const char *s, kb_options *o, kb_err *e)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return KB_FAIL(e, KB_ERR_ARG, "--tuned-config '%s': expected NAME:key=val,...", s);
    if (o->ncustom >= KB_MAX_CUSTOM)
        return KB_FAIL(e, KB_ERR_ARG, "at most %d --tuned-config", KB_MAX_CUSTOM);
    kb_custom_config *c = &o->custom[o->ncustom];
    size_t nlen = (size_t)(colon - s);
    if (nlen >= sizeof c->name || strlen(colon + 1) >= sizeof c->text)
        return KB_FAIL(e, KB_ERR_ARG, "--tuned-config '%s': name or configuration too long", s);
    for (size_t i = 0; i < nlen; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-'))
            return KB_FAIL(e, KB_ERR_ARG,
                           "--tuned-config '%s': name may hold letters, digits, '_' and '-'", s);
    }
    memcpy(c->name, s, nlen);
    c->name[nlen] = '\0';
    strcpy(c->text, colon + 1);
    o->ncustom++;
    return KB_OK;
}

static kb_status add_inputs(const char *s, kb_options *o, kb_err *e)
{
    kb_inputs k;
    KB_TRY(kb_inputs_parse(s, &k, e));
    o->inputs[k] = 1;
    return KB_OK;
}

static kb_status set_sweep(const char *s, kb_options *o, kb_err *e)
{
    if (strcmp(s, "default") == 0) return KB_OK;
    if (strcmp(s, "odd") == 0) o->sweep_odd = 1;
    else if (strcmp(s, "short") == 0) o->sweep_short = 1;
    else if (strcmp(s, "all") == 0) o->sweep_odd = o->sweep_short = 1;
    else return KB_FAIL(e, KB_ERR_ARG, "--sweep '%s': expected default, odd, short or all", s);
    return KB_OK;
}

kb_status kb_cli_parse(int argc, char **argv, kb_options *o, kb_err *e)
{
    memset(o, 0, sizeof *o);
    o->tolerance = o->perf_tolerance = o->budget_ms = NAN;
    o->device = -1;
    o->report_dir = "kbench-report";
    int any_bench = 0, all = 0;
    if (argc < 2) return KB_FAIL(e, KB_ERR_ARG, "no arguments");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) o->mode = KB_MODE_HELP;
        else if (strcmp(a, "--list") == 0) o->mode = KB_MODE_LIST;
        else if (strcmp(a, "--list-cases") == 0) o->mode = KB_MODE_LIST_CASES;
        else if (strcmp(a, "--self-test") == 0) o->mode = KB_MODE_SELF_TEST;
        else if (strcmp(a, "--all") == 0) all = 1;
        else if (strcmp(a, "--case") == 0) {
            KB_TRY(need_value(argc, argv, &i, &o->case_name, e));
            o->mode = KB_MODE_CASE;
        } else if (strcmp(a, "--backend") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(each_item(v, add_backend, o, e));
        } else if (strcmp(a, "--dtype") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(each_item(v, add_dtype, o, e));
        } else if (strcmp(a, "--shape") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            if (o->nshapes >= KB_MAX_SHAPES)
                return KB_FAIL(e, KB_ERR_ARG, "at most %d --shape options", KB_MAX_SHAPES);
            KB_TRY(kb_shape_parse(v, &o->shapes[o->nshapes], e));
            o->nshapes++;
        } else if (strcmp(a, "--inputs") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(each_item(v, add_inputs, o, e));
        } else if (strcmp(a, "--sweep") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(set_sweep(v, o, e));
        } else if (strcmp(a, "--tolerance") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(parse_double(a, v, 0.0, 1e6, &o->tolerance, e));
        } else if (strcmp(a, "--perf-tolerance") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(parse_double(a, v, 0.0, 10.0, &o->perf_tolerance, e));
        } else if (strcmp(a, "--budget-ms") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(parse_double(a, v, 1.0, 600000.0, &o->budget_ms, e));
        } else if (strcmp(a, "--device") == 0) {
            double d = 0;
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(parse_double(a, v, 0, 1024, &d, e));
            if (d != floor(d)) return KB_FAIL(e, KB_ERR_ARG, "--device '%s': not an integer", v);
            o->device = (int)d;
        } else if (strcmp(a, "--exit-on-accuracy-failure") == 0) o->exit_on_accuracy_failure = 1;
        else if (strcmp(a, "--print-benchmark-result") == 0) o->print_result = 1;
        else if (strcmp(a, "--update-baseline") == 0) o->update_baseline = 1;
        else if (strcmp(a, "--tune") == 0) o->tune = 1;
        else if (strcmp(a, "--no-timing") == 0) o->no_timing = 1;
        else if (strcmp(a, "--visualize") == 0) o->visualize = 1;
        else if (strcmp(a, "--report-dir") == 0) KB_TRY(need_value(argc, argv, &i, &o->report_dir, e));
        else if (strcmp(a, "--baseline") == 0) KB_TRY(need_value(argc, argv, &i, &o->baseline, e));
        else if (strcmp(a, "--csv") == 0) KB_TRY(need_value(argc, argv, &i, &o->csv, e));
        else if (strcmp(a, "--json") == 0) KB_TRY(need_value(argc, argv, &i, &o->json, e));
        else if (strcmp(a, "--dump") == 0) KB_TRY(need_value(argc, argv, &i, &o->dump_dir, e));
        else if (strcmp(a, "--tune-cache") == 0) KB_TRY(need_value(argc, argv, &i, &o->tune_cache, e));
        else if (strcmp(a, "--tuned-config") == 0) {
            KB_TRY(need_value(argc, argv, &i, &v, e));
            KB_TRY(add_custom(v, o, e));
        } else if (a[0] == '-') {
            return KB_FAIL(e, KB_ERR_ARG, "unknown option '%s' (see kbench --help)", a);
        } else {
            kb_bench_id b;
            KB_TRY(kb_bench_find(a, &b, e));
            o->bench[b] = 1;
            any_bench = 1;
        }
    }
    if (all)
        for (int b = 0; b < KB_NUM_BENCH; b++) o->bench[b] = 1;
    if (o->mode == KB_MODE_RUN && !all && !any_bench)
        return KB_FAIL(e, KB_ERR_ARG, "no benchmark given: name one, or use --all (see --list)");
    if (o->ncustom && !o->backend[kb_backend_index("tuned")]) {
        int any = 0;
        for (int b = 0; b < KB_NUM_BACKENDS; b++) any |= o->backend[b];
        if (any) o->backend[kb_backend_index("tuned")] = 1; /* custom configs are tuned runs */
    }
    return KB_OK;
}

kb_status kb_cli_env(const char *perf_tolerance, kb_options *o, kb_err *e)
{
    if (!perf_tolerance || !*perf_tolerance || !isnan(o->perf_tolerance)) return KB_OK;
    return parse_double("KBENCH_PERF_TOLERANCE", perf_tolerance, 0.0, 10.0, &o->perf_tolerance, e);
}
