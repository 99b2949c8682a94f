/* On-disk plan cache; see plancache.h. */
#include "plancache.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "csvio.h"
#include "files.h"
#include "registry.h"

#define MAGIC "kbench-plan 2 bytes="
/* A serialised cuDNN norm plan is tens of KB; anything claiming more than
 * this is a damaged file, not a plan. */
#define MAX_PAYLOAD ((size_t)256 << 20)

kb_status kb_plan_cache_path(const char *dir, const char *gpu_name, const char *lib,
                             const kb_problem *p, char *buf, size_t len, kb_err *e)
{
    char gpu[256];
    kb_gpu_file_name(gpu_name, gpu, sizeof gpu);
    const kb_bench_info *b = kb_bench_info_get(p->bench);
    int n = snprintf(buf, len, "%s/plans/%s/%s-%s-%s-%" PRId64 "x%" PRId64 ".plan", dir, gpu, lib,
                     b ? b->name : "unknown", kb_dtype_name(p->dtype), p->M, p->N);
    if (n < 0 || (size_t)n >= len)
        return KB_FAIL(e, KB_ERR_ARG, "plan cache path under %s does not fit in %zu bytes", dir,
                       len);
    return KB_OK;
}

void kb_plan_cache_dir(const char *fallback, char *buf, size_t len)
{
    const char *v;
    int n, on = 1;
    if (!len) return;
    /* A value kb_env_switch refuses counts as on here: kb_cli_env refuses
     * it (exit 2) before any case runs. */
    (void)kb_env_switch("KBENCH_PLAN_CACHE", getenv("KBENCH_PLAN_CACHE"), &on, NULL);
    if (!on)
        n = snprintf(buf, len, "%s", "");
    else if ((v = getenv("KBENCH_CACHE_DIR")) && *v)
        n = snprintf(buf, len, "%s", v);
    else if ((v = getenv("XDG_CACHE_HOME")) && *v)
        n = snprintf(buf, len, "%s/kbench", v);
    else if ((v = getenv("HOME")) && *v)
        n = snprintf(buf, len, "%s/.cache/kbench", v);
    else
        n = snprintf(buf, len, "%s", fallback ? fallback : "");
    if (n < 0 || (size_t)n >= len) buf[0] = '\0'; /* a cut name is another folder */
}

static void say(char *why, size_t why_len, const char *path, const char *what)
{
    if (why && why_len) snprintf(why, why_len, "%s: %s", path, what);
}

kb_status kb_plan_cache_read(const char *path, char *meta, size_t meta_len, char **payload,
                             size_t *payload_len, int *found, char *why, size_t why_len,
                             kb_err *e)
{
    *found = 0;
    *payload = NULL;
    *payload_len = 0;
    if (meta_len) meta[0] = '\0';
    if (why && why_len) why[0] = '\0';
    /* The cache folder may be shared (KBENCH_CACHE_DIR): never through a
     * symbolic link, nothing but a regular file (files.h). */
    kb_err oe = {{0}};
    const int fd = kb_open_shared(path, O_RDONLY, 0, NULL, &oe);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0) {
            close(fd);
            say(why, why_len, path, "out of host memory");
        } else if (errno != ENOENT && why && why_len) {
            snprintf(why, why_len, "%s", kb_err_text(&oe));
        }
        return KB_OK;
    }
    char line[1024];
    kb_status rc = KB_OK;
    if (!fgets(line, sizeof line, f) || strncmp(line, MAGIC, strlen(MAGIC)) != 0 ||
        !strchr(line, '\n')) {
        say(why, why_len, path, "not a kbench plan file (bad first line)");
        goto out;
    }
    char *end = NULL;
    errno = 0;
    const unsigned long long n = strtoull(line + strlen(MAGIC), &end, 10);
    if (errno || end == line + strlen(MAGIC) || (*end != ' ' && *end != '\n') || n == 0 ||
        n > MAX_PAYLOAD) {
        say(why, why_len, path, "bad payload size on the first line");
        goto out;
    }
    unsigned long long want = 0;
    int used = 0;
    if (sscanf(end, " fnv=%16llx%n", &want, &used) != 1 || used != 21 ||
        (end[used] != ' ' && end[used] != '\n')) {
        say(why, why_len, path, "bad checksum field on the first line");
        goto out;
    }
    char *m = end + used + (end[used] == ' ');
    m[strcspn(m, "\n")] = '\0';
    char *buf = malloc((size_t)n + 1);
    if (!buf) {
        rc = KB_FAIL(e, KB_ERR_NOMEM, "plan cache %s: %llu bytes: out of host memory", path, n);
        goto out;
    }
    const size_t got = fread(buf, 1, (size_t)n, f);
    if (got != (size_t)n || fgetc(f) != EOF) {
        free(buf);
        say(why, why_len, path, got != (size_t)n ? "truncated" : "longer than its header says");
        goto out;
    }
    buf[n] = '\0';
    if (kb_fnv1a(KB_FNV1A_BASIS, buf, (size_t)n) != want) {
        free(buf);
        say(why, why_len, path, "payload does not match its checksum");
        goto out;
    }
    if (meta_len) snprintf(meta, meta_len, "%s", m);
    *payload = buf;
    *payload_len = (size_t)n;
    *found = 1;
out:
    fclose(f);
    return rc;
}

typedef struct {
    const char *meta, *payload;
    size_t len;
} plan_text;

static kb_status write_plan(FILE *f, void *ctx, kb_err *e)
{
    const plan_text *t = ctx;
    (void)e;
    fprintf(f, MAGIC "%zu fnv=%016llx %s\n", t->len,
            (unsigned long long)kb_fnv1a(KB_FNV1A_BASIS, t->payload, t->len), t->meta);
    fwrite(t->payload, 1, t->len, f);
    return KB_OK; /* kb_atomic_write checks the stream */
}

kb_status kb_plan_cache_write(const char *path, const char *meta, const char *payload,
                              size_t payload_len, kb_err *e)
{
    if (strchr(meta, '\n'))
        return KB_FAIL(e, KB_ERR_ARG, "plan cache %s: metadata must be one line", path);
    if (strlen(meta) > KB_PLAN_META_MAX)
        return KB_FAIL(e, KB_ERR_ARG, "plan cache %s: metadata of %zu characters (at most %d)",
                       path, strlen(meta), KB_PLAN_META_MAX);
    if (!payload_len || payload_len > MAX_PAYLOAD)
        return KB_FAIL(e, KB_ERR_ARG, "plan cache %s: payload of %zu bytes", path, payload_len);
    KB_TRY(kb_mkdir_parent(path, e));
    /* Under the folder's lock, as every update of a file of a cache folder
     * that may be shared: concurrent writers replace a plan one at a time. */
    const int lock = kb_lock_parent(path, e);
    if (lock < 0) return KB_ERR_IO;
    plan_text t = {meta, payload, payload_len};
    const kb_status st = kb_atomic_write(path, write_plan, &t, e);
    kb_unlock(lock);
    return st;
}
