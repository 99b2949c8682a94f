/* The command line's checks that look beyond the argument text: output
 * paths and the environment a run reads (before any GPU work, so an hour's
 * run is not lost to a typo in --csv, nor a bad value swallowed by a SKIP on
 * a machine without a GPU) and the seed suite's --custom-compile-options
 * JSON. */
#define _DEFAULT_SOURCE /* realpath */
#include "cli.h"
#include "files.h"
#include "gpulock.h"
#include "rowfile.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory part of path ("." without a '/'); 0, or -1 when it does not
 * fit. */
static int dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (strlen(path) >= len) return -1;
    if (!slash) strcpy(dir, ".");
    else if (slash == path) strcpy(dir, "/");
    else {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    }
    return 0;
}

/* Whether a file can be made in directory dir, by making one: access()
 * answers for the real uid, and as root it says yes to /proc or a read-only
 * mount. The probe is a temporary file of its own name, removed again (never
 * the file itself: another process may be making that very file). 0, or the
 * errno of the failure. */
static int probe_dir(const char *dir)
{
    char probe[PATH_MAX];
    if (snprintf(probe, sizeof probe, "%s/.kbench-probe-XXXXXX", dir) >= (int)sizeof probe)
        return ENAMETOOLONG;
    const int fd = mkstemp(probe);
    if (fd < 0) return errno;
    close(fd);
    unlink(probe);
    return 0;
}

/* Whether path (in directory dir) can be written: opened for writing, and
 * left as it is, when it exists (O_NONBLOCK: a FIFO must not hang the
 * check); else whether a file can be made in dir. 0, or the errno. */
static int probe_file(const char *path, const char *dir)
{
    const int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) {
        close(fd);
        return 0;
    }
    return errno == ENOENT ? probe_dir(dir) : errno;
}

/* A file we will create (or append to): its directory must exist, the path
 * must not be a directory, and `probe` (the file itself, or the temporary
 * file the writer makes beside it) must be writable: probe_file. */
static kb_status check_file(const char *flag, const char *path, const char *probe, kb_err *e)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: is a directory, expected a file name", flag, path);
    char dir[1024];
    if (dir_of(path, dir, sizeof dir) != 0)
        return KB_FAIL(e, KB_ERR_ARG, "%s: path too long", flag);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: directory %s does not exist", flag, path, dir);
    const int err = probe_file(probe, dir);
    if (err)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: cannot write %s in directory %s (%s)", flag, path,
                       probe, dir, strerror(err));
    return KB_OK;
}

/* --csv/--json: the rows go to FILE.partial first (rowfile.h), renamed over
 * FILE at the end, so that is the file that must be writable. */
static kb_status check_rows_file(const char *flag, const char *path, kb_err *e)
{
    kb_rowfile w;
    kb_err me;
    if (kb_rowfile_init(&w, path, KB_ROWS_CSV, &me) != KB_OK)
        return KB_FAIL(e, KB_ERR_ARG, "%s: %s", flag, me.msg);
    return check_file(flag, path, w.partial, e);
}

/* The file path names, in one spelling: its realpath when it exists (links,
 * "./" and ".." resolved), else its directory's realpath and its name; the
 * text itself when neither resolves (check_file has refused most of those). */
static void resolved(const char *path, char *out)
{
    char dir[PATH_MAX], real[PATH_MAX];
    if (realpath(path, out)) return;
    const char *slash = strrchr(path, '/');
    if (dir_of(path, dir, sizeof dir) == 0 && realpath(dir, real) &&
        snprintf(out, PATH_MAX, "%s/%s", strcmp(real, "/") ? real : "", slash ? slash + 1 : path) <
            PATH_MAX)
        return;
    snprintf(out, PATH_MAX, "%s", path);
}

/* Two options must not name one file: the second write would destroy the
 * first (or the results overwrite the baseline they were gated against). */
static kb_status check_distinct(const char *flag_a, const char *a, const char *flag_b,
                                const char *b, kb_err *e)
{
    if (!a || !b) return KB_OK;
    char ra[PATH_MAX], rb[PATH_MAX];
    resolved(a, ra);
    resolved(b, rb);
    if (strcmp(ra, rb) != 0) return KB_OK;
    return KB_FAIL(e, KB_ERR_ARG, "%s %s and %s %s name the same file%s%s", flag_a, a, flag_b, b,
                   strcmp(a, ra) ? " " : "", strcmp(a, ra) ? ra : "");
}

/* A directory we will write into: made when missing, then it must be
 * writable (a file made and removed in it). */
static kb_status check_dir(const char *flag, const char *path, kb_err *e)
{
    kb_err me;
    if (kb_mkdir_p(path, &me) != KB_OK)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: %s", flag, path, me.msg);
    const int err = probe_dir(path);
    if (err) return KB_FAIL(e, KB_ERR_ARG, "%s %s: not writable (%s)", flag, path, strerror(err));
    return KB_OK;
}

kb_status kb_cli_check_outputs(const kb_options *o, const char *results_dir, kb_err *e)
{
    if (o->csv) KB_TRY(check_rows_file("--csv", o->csv, e));
    if (o->json) KB_TRY(check_rows_file("--json", o->json, e));
    KB_TRY(check_distinct("--csv", o->csv, "--json", o->json, e));
    for (int i = 0; i < 2; i++) {
        const char *flag = i ? "--json" : "--csv", *path = i ? o->json : o->csv;
        KB_TRY(check_distinct(flag, path, "--baseline", o->baseline, e));
        KB_TRY(check_distinct(flag, path, "--tune-cache", o->tune_cache, e));
    }
    if (o->dump_dir) KB_TRY(check_dir("--dump", o->dump_dir, e));
    if (o->visualize && o->mode == KB_MODE_RUN) KB_TRY(check_dir("--report-dir", o->report_dir, e));
    if (results_dir && *results_dir && o->mode == KB_MODE_CASE)
        KB_TRY(check_dir("KBENCH_RESULTS_DIR", results_dir, e));
    return KB_OK;
}

/* ---- the environment a run reads --------------------------------------------- */

kb_status kb_env_switch(const char *var, const char *v, int *on, kb_err *e)
{
    static const char *const words[2][4] = {{"0", "off", "false", "no"},
                                            {"1", "on", "true", "yes"}};
    if (!v || !*v) return KB_OK;
    for (int w = 0; w < 2; w++)
        for (int i = 0; i < 4; i++)
            if (strcasecmp(v, words[w][i]) == 0) {
                *on = w;
                return KB_OK;
            }
    return KB_FAIL(e, KB_ERR_ARG, "%s='%s': expected on or off (1/0, true/false, yes/no)", var, v);
}

kb_status kb_env_tune_evals(const char *v, int *out, kb_err *e)
{
    if (!v || !*v) return KB_OK;
    char *end;
    errno = 0;
    const long n = strtol(v, &end, 10);
    if (end == v || *end || errno || n < 1 || n > 100000)
        return KB_FAIL(e, KB_ERR_ARG, "KBENCH_TUNE_EVALS='%s': expected a count 1..100000", v);
    *out = (int)n;
    return KB_OK;
}

kb_status kb_cli_check_lock_dir(kb_err *e)
{
    const char *env = getenv("KBENCH_LOCK_DIR"), *dir = kb_lock_dir();
    /* Without it every GPU lock fails, and a --case's server cannot start:
     * its client then waited 30 s for it, then ran the case itself. */
    const char *what = env && *env ? "KBENCH_LOCK_DIR" : "the default lock directory";
    const char *hint = env && *env ? "" : " (set KBENCH_LOCK_DIR to a writable directory)";
    struct stat st;
    if (stat(dir, &st) != 0)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: %s%s", what, dir, strerror(errno), hint);
    if (!S_ISDIR(st.st_mode))
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: not a directory%s", what, dir, hint);
    const int err = probe_dir(dir);
    if (err)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: cannot create a file in it (%s)%s", what, dir,
                       strerror(err), hint);
    return KB_OK;
}

/* KBENCH_CUPTI_LIB names the library the kernel check loads (kernel_trace.h;
 * "none" turns the check off on purpose). One that does not load would turn
 * it off unasked: on a GPU every case's kernel check SKIPs, and
 * FUSION_CHANGED is never flagged. */
static kb_status check_cupti(const char *v, kb_err *e)
{
    if (!v || !*v || strcmp(v, "none") == 0) return KB_OK;
    /* Loaded as the kernel check loads it (kernel_trace.c): once CUPTI is
     * mapped it stays, so the check's later open finds this one rather than
     * a library unmapped and mapped again in the same process. */
    void *lib = dlopen(v, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) {
        const char *why = dlerror();
        return KB_FAIL(e, KB_ERR_ARG, "KBENCH_CUPTI_LIB='%s': cannot be loaded (%s); name the "
                       "CUPTI library, or 'none' to turn the kernel check off", v,
                       why ? why : "dlopen failed");
    }
    /* A library that loads but is not CUPTI fails the same way on a GPU, one
     * symbol later (kernel_trace.c resolves cuptiActivityEnable and others). */
    const int cupti = dlsym(lib, "cuptiActivityEnable") != NULL;
    dlclose(lib);
    if (!cupti)
        return KB_FAIL(e, KB_ERR_ARG, "KBENCH_CUPTI_LIB='%s': not a CUPTI library (no "
                       "cuptiActivityEnable); name the CUPTI library, or 'none' to turn the "
                       "kernel check off", v);
    return KB_OK;
}

kb_status kb_cli_check_env(kb_err *e)
{
    int evals = 0, on = 1;
    KB_TRY(kb_env_tune_evals(getenv("KBENCH_TUNE_EVALS"), &evals, e));
    const char *log = getenv("KBENCH_TUNE_LOG");
    if (log && *log) KB_TRY(check_file("KBENCH_TUNE_LOG", log, log, e));
    KB_TRY(check_cupti(getenv("KBENCH_CUPTI_LIB"), e));
    KB_TRY(kb_env_switch("KBENCH_PLAN_CACHE", getenv("KBENCH_PLAN_CACHE"), &on, e));
    KB_TRY(kb_env_switch("KBENCH_SERVER", getenv("KBENCH_SERVER"), &on, e));
    return kb_cli_check_lock_dir(e);
}

/* ---- {"key": value, ...} -> "key=value,..." ---------------------------------
 * The seed passes torch.compile options as a JSON object; kbench's tuned
 * backend takes integer launch parameters. A flat object is all that can
 * mean anything here, so this reads exactly that: string keys; values
 * integers, integer strings ("256") or booleans (1/0). */
typedef struct {
    const char *s, *p;
    kb_err *e;
} json_in;

static void skip_ws(json_in *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r') j->p++;
}

static kb_status json_bad(json_in *j, const char *what)
{
    return KB_FAIL(j->e, KB_ERR_ARG,
                   "--custom-compile-options '%s': %s at offset %d (expected a JSON object of "
                   "integer launch parameters, e.g. '{\"threads\": 256, \"rows\": 2}')",
                   j->s, what, (int)(j->p - j->s));
}

/* A JSON string without escapes (keys and values here are plain words). */
static kb_status json_word(json_in *j, char *out, size_t len)
{
    if (*j->p != '"') return json_bad(j, "expected '\"'");
    const char *start = ++j->p;
    while (*j->p && *j->p != '"' && *j->p != '\\') j->p++;
    if (*j->p != '"') return json_bad(j, "unterminated string or escape sequence");
    size_t n = (size_t)(j->p - start);
    if (n == 0 || n >= len) return json_bad(j, "empty or overlong string");
    memcpy(out, start, n);
    out[n] = '\0';
    j->p++;
    return KB_OK;
}

static kb_status json_value(json_in *j, char *out, size_t len)
{
    if (*j->p == '"') {
        KB_TRY(json_word(j, out, len));
    } else if (strncmp(j->p, "true", 4) == 0 || strncmp(j->p, "false", 5) == 0) {
        int t = *j->p == 't';
        snprintf(out, len, "%d", t);
        j->p += t ? 4 : 5;
    } else {
        const char *start = j->p;
        if (*j->p == '-') j->p++;
        while (isdigit((unsigned char)*j->p)) j->p++;
        if (j->p == start || *j->p == '.' || *j->p == 'e' || *j->p == 'E' ||
            (size_t)(j->p - start) >= len)
            return json_bad(j, "expected an integer, an integer string or a boolean");
        memcpy(out, start, (size_t)(j->p - start));
        out[j->p - start] = '\0';
    }
    return KB_OK;
}

kb_status kb_cli_json_config(const char *json, char *out, size_t len, kb_err *e)
{
    json_in j = {json, json, e};
    size_t n = 0;
    out[0] = '\0';
    skip_ws(&j);
    if (*j.p != '{') return json_bad(&j, "expected '{'");
    j.p++;
    skip_ws(&j);
    if (*j.p == '}') return json_bad(&j, "empty object");
    for (;;) {
        char key[48], val[48];
        skip_ws(&j);
        KB_TRY(json_word(&j, key, sizeof key));
        skip_ws(&j);
        if (*j.p != ':') return json_bad(&j, "expected ':'");
        j.p++;
        skip_ws(&j);
        KB_TRY(json_value(&j, val, sizeof val));
        int w = snprintf(out + n, len - n, "%s%s=%s", n ? "," : "", key, val);
        if (w < 0 || (size_t)w >= len - n) return json_bad(&j, "too many parameters");
        n += (size_t)w;
        skip_ws(&j);
        if (*j.p == ',') {
            j.p++;
            continue;
        }
        if (*j.p != '}') return json_bad(&j, "expected ',' or '}'");
        j.p++;
        skip_ws(&j);
        if (*j.p) return json_bad(&j, "text after the object");
        return KB_OK;
    }
}
