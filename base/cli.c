/* Command-line parsing on getopt_long: flags as PyTorch's genai_layers
 * benchmark spells them first, then kbench's own. Every value is checked
 * here, before any GPU work; what the selection holds, in selection.c. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void kb_cli_usage(FILE *f)
{
    fputs("usage: kbench [options] [benchmark ...]\n"
          "       kbench --all | --list | --list-cases | --describe | --case NAME | --self-test\n"
          "Options take their value as '--opt VALUE' or '--opt=VALUE'; '--' ends the options.\n"
          "\n"
          "selection:\n"
          "  --all                      run every benchmark\n"
          "  --list                     list benchmarks and the backends implementing them\n"
          "  --backend B[,B]            eager, fused, tuned, cudnn, cublaslt_epilogue (default:\n"
          "                             all registered)\n"
          "  --shape MxN                run this shape (repeatable) instead of the sweep;\n"
          "                             MxNxK for mlp_forward (T x D x H)\n"
          "  --dtype D[,D]              bf16, fp16, fp32 (default bf16)\n"
          "  --sweep default|odd|short|all  registered shape lists to run (default: default)\n"
          "  --inputs K[,K]             input kinds: randn (default), shifted, wide, masked,\n"
          "                             constant, small (a kind runs its registered shapes\n"
          "                             and dtypes unless --shape/--dtype say otherwise)\n"
          "accuracy and output:\n"
          "  --tolerance T              atol = rtol = T instead of the per-dtype defaults\n"
          "  --exit-on-accuracy-failure stop at the first accuracy failure (exit 1)\n"
          "  --print-benchmark-result   one line per result\n"
          "  --csv FILE, --json FILE    write the results (row by row as cases finish)\n"
          "  --dump DIR                 write each case's inputs, outputs and gold as .npy\n"
          "  --visualize                write the report and plots after the run\n"
          "  --report-dir DIR           where --visualize writes (default kbench-report)\n"
          "baselines:\n"
          "  --baseline FILE            baseline CSV (default baselines/<gpu>.csv)\n"
          "  --update-baseline          merge this run's rows into the baseline file\n"
          "  --update-baseline-kernels  write only the kernels columns of existing rows\n"
          "  --perf-tolerance P         allowed GB/s drop before SLOWER, 0 < P < 1 (default 0.10;\n"
          "                             env KBENCH_PERF_TOLERANCE)\n"
          "tuned backend:\n"
          "  --tune                     run the launch-parameter search, store it in the cache\n"
          "  --tune-cache FILE          cache file (default baselines/tuning/<gpu>.txt)\n"
          "  --tuned-config NAME:k=v,.. a named launch configuration, its own series\n"
          "                             (keys: threads rows cluster unroll split hold occ db acc\n"
          "                             reload hint uncap xchg, as the benchmark's tuned kernel\n"
          "                             has them)\n"
          "PyTorch genai_layers flags, in kbench's terms:\n"
          "  --compile-mode heuristic|cache|autotune\n"
          "                             tuned launch parameters from the heuristic only, from\n"
          "                             the tuning cache (default), or tuned now (= --tune)\n"
          "  --custom-compile-name NAME --custom-compile-options '{\"threads\": 256, ...}'\n"
          "                             = --tuned-config NAME:threads=256,... (both needed)\n"
          "other:\n"
          "  --device N                 CUDA device (default: CTest's allocation, else 0)\n"
          "  --budget-ms MS             wall-clock timing budget per case (default 1500)\n"
          "  --no-timing                check accuracy (and kernels) only\n"
          "  --prepare                  only set each case up and tear it down: builds and\n"
          "                             caches library plans (cuDNN) without the GPU lock,\n"
          "                             so several can run side by side before a timed run\n"
          "  --case NAME                run one CTest case <bench>.<backend>.<dtype>.<M>x<N>[.<inputs>]\n"
          "                             (<M>x<N>x<K> for mlp_forward, mlp_swiglu_forward)\n"
          "  --list-cases               print every CTest case with its labels\n"
          "  --describe                 print the benchmarks' tensors, byte models, shapes,\n"
          "                             dtypes and backends as JSON (no GPU needed)\n"
          "  --self-test                check the GPU reference against the CPU reference\n"
          "  -h, --help                 this text\n"
          "exit: 0 pass, 1 failure, 2 usage error, 77 skipped (no GPU, or no case of a run ran)\n",
          f);
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

/* A tolerance is a fraction of the baseline's GB/s: 0 flags every wobble,
 * 1 or more never flags anything. Both are mistakes, so (0, 1) open. */
static kb_status parse_perf_tolerance(const char *flag, const char *s, double *out, kb_err *e)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !(v > 0.0 && v < 1.0))
        return KB_FAIL(e, KB_ERR_ARG,
                       "%s '%s': expected a fraction between 0 and 1, exclusive (e.g. 0.05)",
                       flag, s);
    *out = v;
    return KB_OK;
}

/* Comma-separated list, each item through fn; empty items ("a,,b", ",a",
 * "a,") are mistakes, not something to skip. */
static kb_status each_item(const char *flag, const char *list,
                           kb_status (*fn)(const char *, kb_options *, kb_err *), kb_options *o,
                           kb_err *e)
{
    char buf[256];
    if (strlen(list) >= sizeof buf) return KB_FAIL(e, KB_ERR_ARG, "%s: list too long: '%s'", flag, list);
    strcpy(buf, list);
    for (char *t = buf, *next; t; t = next) {
        next = strchr(t, ',');
        if (next) *next++ = '\0';
        if (!*t) return KB_FAIL(e, KB_ERR_ARG, "%s '%s': empty element in the list", flag, list);
        KB_TRY(fn(t, o, e));
    }
    return KB_OK;
}

/* An unknown name is refused after the benchmarks are read (kb_cli_parse),
 * so that the message lists the backends the selected ones have. */
static kb_status add_backend(const char *s, kb_options *o, kb_err *e)
{
    (void)e;
    int b = kb_backend_index(s);
    if (b < 0) {
        if (!o->unknown_backend[0])
            snprintf(o->unknown_backend, sizeof o->unknown_backend, "%.*s",
                     (int)sizeof o->unknown_backend - 1, s);
        return KB_OK;
    }
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

/* Keys of the tuned kernels' search spaces (kb_tune_space.names in
 * kernels/<op>/tuned.cu and norm_tuned.cuh). Whether a benchmark's kernel
 * has the key and the value among its choices is checked at its setup;
 * here a typo is caught before any GPU work. */
static const char *const tune_keys[] = {"threads", "rows", "cluster", "unroll", "split",
                                        "hold",    "occ",  "db",      "acc",    "reload",
                                        "hint",    "uncap", "xchg"};

static kb_status check_config_text(const char *what, const char *text, kb_err *e)
{
    char buf[256];
    unsigned seen = 0;
    if (!*text) return KB_FAIL(e, KB_ERR_ARG, "%s: empty configuration", what);
    if (strlen(text) >= sizeof buf) return KB_FAIL(e, KB_ERR_ARG, "%s: configuration too long", what);
    strcpy(buf, text);
    for (char *t = buf, *next; t; t = next) {
        next = strchr(t, ',');
        if (next) *next++ = '\0';
        char *eq = strchr(t, '=');
        if (!*t || !eq || eq == t || !eq[1])
            return KB_FAIL(e, KB_ERR_ARG, "%s: '%s' is not key=value", what, t);
        *eq = '\0';
        size_t k = 0, nkeys = sizeof tune_keys / sizeof tune_keys[0];
        while (k < nkeys && strcmp(t, tune_keys[k]) != 0) k++;
        if (k == nkeys) {
            char known[160];
            size_t n = 0;
            known[0] = '\0';
            for (size_t i = 0; i < nkeys && n < sizeof known; i++)
                n += (size_t)snprintf(known + n, sizeof known - n, "%s%s",
                                      i == 0 ? "" : i + 1 == nkeys ? " or " : ", ", tune_keys[i]);
            return KB_FAIL(e, KB_ERR_ARG, "%s: unknown key '%s' (expected %s)", what, t, known);
        }
        if (seen & (1u << k)) return KB_FAIL(e, KB_ERR_ARG, "%s: key '%s' given twice", what, t);
        seen |= 1u << k;
        char *end = NULL;
        errno = 0;
        long v = strtol(eq + 1, &end, 10);
        if (*end || errno || v < 0 || v > 65536)
            return KB_FAIL(e, KB_ERR_ARG, "%s: %s='%s' is not an integer in [0, 65536]", what, t,
                           eq + 1);
    }
    return KB_OK;
}

/* name_flag and text_flag: the options the user typed the name and the
 * configuration with (both --tuned-config, or the seed's two options), so a
 * message names the one that holds the bad value. */
static kb_status add_custom_named(const char *name_flag, const char *name, size_t nlen,
                                  const char *text_flag, const char *text, kb_options *o,
                                  kb_err *e)
{
    if (o->ncustom >= KB_MAX_CUSTOM)
        return KB_FAIL(e, KB_ERR_ARG, "at most %d named tuned configurations", KB_MAX_CUSTOM);
    kb_custom_config *c = &o->custom[o->ncustom];
    if (nlen == 0 || nlen >= sizeof c->name)
        return KB_FAIL(e, KB_ERR_ARG, "%s: name empty or too long", name_flag);
    if (strlen(text) >= sizeof c->text)
        return KB_FAIL(e, KB_ERR_ARG, "%s: configuration too long", text_flag);
    for (size_t i = 0; i < nlen; i++) {
        char ch = name[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-'))
            return KB_FAIL(e, KB_ERR_ARG,
                           "%s: name '%.*s' may hold only letters, digits, '_' and '-'", name_flag,
                           (int)nlen, name);
    }
    for (int i = 0; i < o->ncustom; i++)
        if (strlen(o->custom[i].name) == nlen && strncmp(o->custom[i].name, name, nlen) == 0)
            return KB_FAIL(e, KB_ERR_ARG, "%s: name '%.*s' used twice", name_flag, (int)nlen,
                           name);
    KB_TRY(check_config_text(text_flag, text, e));
    memcpy(c->name, name, nlen);
    c->name[nlen] = '\0';
    strcpy(c->text, text);
    o->ncustom++;
    return KB_OK;
}

static kb_status add_custom(const char *s, kb_options *o, kb_err *e)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || !colon[1])
        return KB_FAIL(e, KB_ERR_ARG, "--tuned-config '%s': expected NAME:key=val,...", s);
    return add_custom_named("--tuned-config", s, (size_t)(colon - s), "--tuned-config", colon + 1,
                            o, e);
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

static kb_status set_compile_mode(const char *s, kb_options *o, kb_err *e)
{
    if (strcmp(s, "cache") == 0) o->compile_mode = KB_COMPILE_CACHE;
    else if (strcmp(s, "heuristic") == 0) o->compile_mode = KB_COMPILE_HEURISTIC;
    else if (strcmp(s, "autotune") == 0) o->compile_mode = KB_COMPILE_AUTOTUNE;
    else
        return KB_FAIL(e, KB_ERR_ARG,
                       "--compile-mode '%s': expected heuristic (tuned launch parameters from the "
                       "heuristic), cache (from the tuning cache) or autotune (tune now)",
                       s);
    return KB_OK;
}

/* ---- the option table ------------------------------------------------------ */
enum {
    OPT_HELP = 'h',
    OPT_ALL = 256, OPT_LIST, OPT_LIST_CASES, OPT_SELF_TEST, OPT_CASE, OPT_BACKEND, OPT_DTYPE,
    OPT_SHAPE, OPT_SWEEP, OPT_TOLERANCE, OPT_PERF_TOLERANCE, OPT_BUDGET, OPT_DEVICE, OPT_EXIT_ACC,
    OPT_PRINT, OPT_UPDATE_BASELINE, OPT_TUNE, OPT_NO_TIMING, OPT_PREPARE, OPT_VISUALIZE, OPT_REPORT_DIR,
    OPT_BASELINE, OPT_CSV, OPT_JSON, OPT_DUMP, OPT_TUNE_CACHE, OPT_TUNED_CONFIG, OPT_COMPILE_MODE,
    OPT_CUSTOM_NAME, OPT_CUSTOM_OPTIONS, OPT_INPUTS, OPT_UPDATE_KERNELS, OPT_DESCRIBE, OPT_END
};

static const struct option long_opts[] = {
    {"help", no_argument, NULL, OPT_HELP},
    {"all", no_argument, NULL, OPT_ALL},
    {"list", no_argument, NULL, OPT_LIST},
    {"list-cases", no_argument, NULL, OPT_LIST_CASES},
    {"describe", no_argument, NULL, OPT_DESCRIBE},
    {"self-test", no_argument, NULL, OPT_SELF_TEST},
    {"case", required_argument, NULL, OPT_CASE},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"inputs", required_argument, NULL, OPT_INPUTS},
    {"sweep", required_argument, NULL, OPT_SWEEP},
    {"tolerance", required_argument, NULL, OPT_TOLERANCE},
    {"perf-tolerance", required_argument, NULL, OPT_PERF_TOLERANCE},
    {"budget-ms", required_argument, NULL, OPT_BUDGET},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"exit-on-accuracy-failure", no_argument, NULL, OPT_EXIT_ACC},
    {"print-benchmark-result", no_argument, NULL, OPT_PRINT},
    {"update-baseline", no_argument, NULL, OPT_UPDATE_BASELINE},
    {"update-baseline-kernels", no_argument, NULL, OPT_UPDATE_KERNELS},
    {"tune", no_argument, NULL, OPT_TUNE},
    {"no-timing", no_argument, NULL, OPT_NO_TIMING},
    {"prepare", no_argument, NULL, OPT_PREPARE},
    {"visualize", no_argument, NULL, OPT_VISUALIZE},
    {"report-dir", required_argument, NULL, OPT_REPORT_DIR},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"csv", required_argument, NULL, OPT_CSV},
    {"json", required_argument, NULL, OPT_JSON},
    {"dump", required_argument, NULL, OPT_DUMP},
    {"tune-cache", required_argument, NULL, OPT_TUNE_CACHE},
    {"tuned-config", required_argument, NULL, OPT_TUNED_CONFIG},
    {"compile-mode", required_argument, NULL, OPT_COMPILE_MODE},
    {"custom-compile-name", required_argument, NULL, OPT_CUSTOM_NAME},
    {"custom-compile-options", required_argument, NULL, OPT_CUSTOM_OPTIONS},
    {NULL, 0, NULL, 0},
};

/* Options that add up when repeated; any other option with a value given
 * twice is a mistake (the first would be silently lost). */
static int repeatable(int id)
{
    return id == OPT_BACKEND || id == OPT_DTYPE || id == OPT_SHAPE || id == OPT_TUNED_CONFIG ||
           id == OPT_INPUTS;
}

static int takes_value(int id)
{
    for (const struct option *p = long_opts; p->name; p++)
        if (p->val == id) return p->has_arg != no_argument;
    return 0;
}

static const char *opt_name(int id)
{
    for (const struct option *p = long_opts; p->name; p++)
        if (p->val == id) return p->name;
    return "?";
}

static kb_status set_mode(kb_options *o, kb_mode m, int id, int *mode_opt, kb_err *e)
{
    if (*mode_opt && *mode_opt != id)
        return KB_FAIL(e, KB_ERR_ARG, "--%s and --%s cannot be combined", opt_name(*mode_opt),
                       opt_name(id));
    *mode_opt = id;
    o->mode = m;
    return KB_OK;
}

static kb_status one_option(int id, const char *v, kb_options *o, int *mode_opt, int *all,
                            const char **custom_name, const char **custom_json, kb_err *e)
{
    double d = 0;
    switch (id) {
    case OPT_HELP: o->mode = KB_MODE_HELP; return KB_OK;
    case OPT_LIST: return set_mode(o, KB_MODE_LIST, id, mode_opt, e);
    case OPT_LIST_CASES: return set_mode(o, KB_MODE_LIST_CASES, id, mode_opt, e);
    case OPT_DESCRIBE: return set_mode(o, KB_MODE_DESCRIBE, id, mode_opt, e);
    case OPT_SELF_TEST: return set_mode(o, KB_MODE_SELF_TEST, id, mode_opt, e);
    case OPT_CASE:
        o->case_name = v;
        return set_mode(o, KB_MODE_CASE, id, mode_opt, e);
    case OPT_ALL: *all = 1; return KB_OK;
    case OPT_BACKEND: return each_item("--backend", v, add_backend, o, e);
    case OPT_DTYPE: return each_item("--dtype", v, add_dtype, o, e);
    case OPT_SHAPE:
        if (o->nshapes >= KB_MAX_SHAPES)
            return KB_FAIL(e, KB_ERR_ARG, "at most %d --shape options", KB_MAX_SHAPES);
        KB_TRY(kb_shape_parse(v, &o->shapes[o->nshapes], e));
        o->nshapes++;
        return KB_OK;
    case OPT_INPUTS: return each_item("--inputs", v, add_inputs, o, e);
    case OPT_SWEEP: return set_sweep(v, o, e);
    case OPT_TOLERANCE: return parse_double("--tolerance", v, 0.0, 1e6, &o->tolerance, e);
    case OPT_PERF_TOLERANCE: return parse_perf_tolerance("--perf-tolerance", v, &o->perf_tolerance, e);
    case OPT_BUDGET: return parse_double("--budget-ms", v, 1.0, 600000.0, &o->budget_ms, e);
    case OPT_DEVICE:
        KB_TRY(parse_double("--device", v, 0, 1024, &d, e));
        if (d != floor(d)) return KB_FAIL(e, KB_ERR_ARG, "--device '%s': not an integer", v);
        o->device = (int)d;
        return KB_OK;
    case OPT_EXIT_ACC: o->exit_on_accuracy_failure = 1; return KB_OK;
    case OPT_PRINT: o->print_result = 1; return KB_OK;
    case OPT_UPDATE_BASELINE: o->update_baseline = 1; return KB_OK;
    case OPT_UPDATE_KERNELS: o->update_baseline_kernels = 1; return KB_OK;
    case OPT_TUNE: o->tune = 1; return KB_OK;
    case OPT_NO_TIMING: o->no_timing = 1; return KB_OK;
    case OPT_PREPARE: o->prepare = 1; return KB_OK;
    case OPT_VISUALIZE: o->visualize = 1; return KB_OK;
    case OPT_REPORT_DIR: o->report_dir = v; return KB_OK;
    case OPT_BASELINE: o->baseline = v; return KB_OK;
    case OPT_CSV: o->csv = v; return KB_OK;
    case OPT_JSON: o->json = v; return KB_OK;
    case OPT_DUMP: o->dump_dir = v; return KB_OK;
    case OPT_TUNE_CACHE: o->tune_cache = v; return KB_OK;
    case OPT_TUNED_CONFIG: return add_custom(v, o, e);
    case OPT_COMPILE_MODE: return set_compile_mode(v, o, e);
    case OPT_CUSTOM_NAME: *custom_name = v; return KB_OK;
    case OPT_CUSTOM_OPTIONS: *custom_json = v; return KB_OK;
    }
    return KB_FAIL(e, KB_ERR_ARG, "internal: unhandled option %d", id);
}

/* The seed's pair: a name and a JSON object, both or neither. */
static kb_status add_seed_custom(const char *name, const char *json, kb_options *o, kb_err *e)
{
    if (!name && !json) return KB_OK;
    if (!json)
        return KB_FAIL(e, KB_ERR_ARG,
                       "--custom-compile-name '%s' needs --custom-compile-options '{\"key\": "
                       "value, ...}' (the tuned launch parameters it names)",
                       name);
    if (!name)
        return KB_FAIL(e, KB_ERR_ARG,
                       "--custom-compile-options needs --custom-compile-name NAME (the series "
                       "is shown as tuned:NAME)");
    char text[sizeof o->custom[0].text];
    KB_TRY(kb_cli_json_config(json, text, sizeof text, e));
    return add_custom_named("--custom-compile-name", name, strlen(name), "--custom-compile-options",
                            text, o, e);
}

/* getopt_long's own complaint, in our words and naming the argument. */
static kb_status getopt_error(int c, int argc, char **argv, kb_err *e)
{
    const char *a = optind - 1 < argc && optind >= 1 ? argv[optind - 1] : "?";
    if (c == ':') return KB_FAIL(e, KB_ERR_ARG, "option '%s' needs a value", a);
    if (strncmp(a, "--", 2) == 0 && strchr(a, '='))
        return KB_FAIL(e, KB_ERR_ARG, "option '%s': unknown, or takes no value", a);
    return KB_FAIL(e, KB_ERR_ARG, "unknown or ambiguous option '%s'", a);
}

kb_status kb_cli_parse(int argc, char **argv, kb_options *o, kb_err *e)
{
    memset(o, 0, sizeof *o);
    o->tolerance = o->perf_tolerance = o->budget_ms = NAN;
    o->device = -1;
    o->report_dir = "kbench-report";
    int any_bench = 0, all = 0, mode_opt = 0;
    int count[OPT_END] = {0};
    const char *custom_name = NULL, *custom_json = NULL;
    if (argc < 2) return KB_FAIL(e, KB_ERR_ARG, "no arguments");
    optind = 0; /* glibc: full re-initialisation, so the parser can run again */
    opterr = 0; /* errors are reported through e */
    int c;
    while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
        if (c == '?' || c == ':') return getopt_error(c, argc, argv, e);
        if (takes_value(c)) {
            if (++count[c] > 1 && !repeatable(c))
                return KB_FAIL(e, KB_ERR_ARG, "--%s given twice (it takes one value)",
                               opt_name(c));
            if (!*optarg) return KB_FAIL(e, KB_ERR_ARG, "--%s: empty value", opt_name(c));
        }
        KB_TRY(one_option(c, optarg, o, &mode_opt, &all, &custom_name, &custom_json, e));
    }
    for (int i = optind; i < argc; i++) {
        kb_bench_id b;
        KB_TRY(kb_bench_find(argv[i], &b, e));
        o->bench[b] = 1;
        any_bench = 1;
    }
    KB_TRY(add_seed_custom(custom_name, custom_json, o, e));
    if (o->tune && o->compile_mode == KB_COMPILE_HEURISTIC)
        return KB_FAIL(e, KB_ERR_ARG, "--tune and --compile-mode heuristic contradict each other");
    if (o->compile_mode == KB_COMPILE_AUTOTUNE) o->tune = 1;
    if (o->tune) o->compile_mode = KB_COMPILE_AUTOTUNE;
    if (all)
        for (int b = 0; b < KB_NUM_BENCH; b++) o->bench[b] = 1;
    if (o->unknown_backend[0]) {
        char have[256];
        kb_selection_backends(o, have, sizeof have);
        return KB_FAIL(e, KB_ERR_ARG, "Unknown backend '%s': %s", o->unknown_backend, have);
    }
    if (o->mode == KB_MODE_RUN && !all && !any_bench)
        return KB_FAIL(e, KB_ERR_ARG, "no benchmark given: name one, or use --all (see --list)");
    if (o->ncustom && !o->backend[kb_backend_index("tuned")]) {
        int any = 0;
        for (int b = 0; b < KB_NUM_BACKENDS; b++) any |= o->backend[b];
        if (any) o->backend[kb_backend_index("tuned")] = 1; /* custom configs are tuned runs */
    }
    if (o->prepare && o->mode != KB_MODE_RUN && o->mode != KB_MODE_CASE)
        return KB_FAIL(e, KB_ERR_ARG,
                       "--prepare sets cases up: it goes with a selection or --case NAME, not "
                       "with --%s", opt_name(mode_opt));
    if (o->prepare && (o->update_baseline || o->update_baseline_kernels || o->tune || o->csv ||
                       o->json || o->dump_dir || o->visualize || o->ncustom))
        return KB_FAIL(e, KB_ERR_ARG,
                       "--prepare measures nothing: it takes no --update-baseline, "
                       "--update-baseline-kernels, --tune, --csv, --json, --dump, --visualize or "
                       "--tuned-config");
    if (o->mode == KB_MODE_RUN) KB_TRY(kb_cli_check_selection(o, e));
    if (o->mode == KB_MODE_CASE) {
        /* here, not when the case runs: a usage error must not reach the GPU's
         * server (main.c) nor wait for the device */
        kb_case one;
        KB_TRY(kb_case_parse(o->case_name, &one, e));
    }
    return KB_OK;
}

kb_status kb_cli_env(const char *perf_tolerance, kb_options *o, kb_err *e)
{
    /* Only a run gates: --help, --list, --list-cases (CMake's case discovery),
     * --describe and --self-test must work whatever ci/gate exported. */
    if (o->mode != KB_MODE_RUN && o->mode != KB_MODE_CASE) return KB_OK;
    KB_TRY(kb_cli_check_env(e));
    if (!perf_tolerance || !*perf_tolerance || !isnan(o->perf_tolerance)) return KB_OK;
    return parse_perf_tolerance("KBENCH_PERF_TOLERANCE", perf_tolerance, &o->perf_tolerance, e);
}

void kb_cli_error(FILE *f, kb_status st, const kb_err *e)
{
    fprintf(f, "Error: %s\n", kb_err_text(e));
    /* The hint is this line's alone (messages never carry it), so every usage
     * error gets it exactly once, whatever option its message names. */
    if (st == KB_ERR_ARG) fputs("Run 'kbench --help' for usage.\n", f);
}

int kb_cli_exit_code(kb_mode mode, int passed, int failed, int skipped)
{
    if (failed) return 1;
    /* A --case that skipped did not pass; nor did a run none of whose cases
     * ran (every one skipped: no GPU memory, no library): 77, as CTest and
     * ci/gate read a skip, never a vacuous 0. */
    if (mode == KB_MODE_CASE ? skipped > 0 : passed == 0) return KB_EXIT_SKIP;
    return 0;
}
