/* The command line's checks that look beyond the argument text: output
 * paths (before any GPU work, so an hour's run is not lost to a typo in
 * --csv) and the seed suite's --custom-compile-options JSON. */
#include "cli.h"
#include "files.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file we will create: its directory must exist and be writable, and the
 * path itself must not be a directory. */
static kb_status check_file(const char *flag, const char *path, kb_err *e)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: is a directory, expected a file name", flag, path);
    char dir[1024];
    const char *slash = strrchr(path, '/');
    if (strlen(path) >= sizeof dir) return KB_FAIL(e, KB_ERR_ARG, "%s: path too long", flag);
    if (!slash) strcpy(dir, ".");
    else if (slash == path) strcpy(dir, "/");
    else {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: directory %s does not exist", flag, path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: directory %s is not writable (%s)", flag, path, dir,
                       strerror(errno));
    return KB_OK;
}

/* A directory we will write into: made when missing, then it must be
 * writable. */
static kb_status check_dir(const char *flag, const char *path, kb_err *e)
{
    kb_err me;
    if (kb_mkdir_p(path, &me) != KB_OK)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: %s", flag, path, me.msg);
    if (access(path, W_OK | X_OK) != 0)
        return KB_FAIL(e, KB_ERR_ARG, "%s %s: not writable (%s)", flag, path, strerror(errno));
    return KB_OK;
}

kb_status kb_cli_check_outputs(const kb_options *o, const char *results_dir, kb_err *e)
{
    if (o->csv) KB_TRY(check_file("--csv", o->csv, e));
    if (o->json) KB_TRY(check_file("--json", o->json, e));
    if (o->csv && o->json && strcmp(o->csv, o->json) == 0)
        return KB_FAIL(e, KB_ERR_ARG, "--csv and --json name the same file %s", o->csv);
    if (o->dump_dir) KB_TRY(check_dir("--dump", o->dump_dir, e));
    if (o->visualize && o->mode == KB_MODE_RUN) KB_TRY(check_dir("--report-dir", o->report_dir, e));
    if (results_dir && *results_dir && o->mode == KB_MODE_CASE)
        KB_TRY(check_dir("KBENCH_RESULTS_DIR", results_dir, e));
    return KB_OK;
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
