/* Files in folders other users can write to (files.h): what another local
 * user may plant at a path kbench uses there (a symbolic link, a hard link,
 * a FIFO, a file of their own) is refused or left alone, and nothing
 * outside is touched. The GPU lock, the server's folder and lock, the SOL
 * cache, the plan cache, the tuning cache and the baseline's temporary are
 * each tried with a symbolic link to a file (or folder) of the victim's. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baseline.h"
#include "csvio.h"
#include "device.h"
#include "files.h"
#include "gpulock.h"
#include "plancache.h"
#include "server.h"
#include "tmpfiles.h"
#include "tuner.h"
#include "unit.h"

#define SECRET "secret of the victim\n"

/* A file of the victim's outside the shared folder: SECRET, mode 0600. */
static void make_victim(const char *path)
{
    kbt_write(path, SECRET);
    ck_assert_int_eq(chmod(path, 0600), 0);
}

/* The victim's file is as it was: same bytes, same mode. */
static void victim_untouched(const char *path, const char *what)
{
    struct stat st;
    ck_assert_msg(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "%s: victim gone", what);
    ck_assert_msg((st.st_mode & 07777) == 0600, "%s: victim's mode is now %04o", what,
                  (unsigned)(st.st_mode & 07777));
    char *text = kbt_read(path, NULL);
    ck_assert_msg(text && strcmp(text, SECRET) == 0, "%s: victim's content is now '%s'", what,
                  text ? text : "(unreadable)");
    free(text);
}

static void plant(const char *target, const char *at)
{
    ck_assert_msg(symlink(target, at) == 0, "symlink %s: %s", at, strerror(errno));
}

/* Two scratch folders: the shared one (dir) and the victim's (out), with
 * the victim's file at out/victim. */
typedef struct {
    char dir[4096], out[4096], victim[4200];
} scene;

static void scene_open(scene *s)
{
    kbt_tmpdir(s->dir);
    kbt_tmpdir(s->out);
    snprintf(s->victim, sizeof s->victim, "%s/victim", s->out);
    make_victim(s->victim);
}

static void scene_close(scene *s)
{
    kbt_rm_rf(s->dir);
    kbt_rm_rf(s->out);
}

/* ---- kb_open_shared ---- */

START_TEST(open_shared_refuses_links_fifos_and_strangers)
{
    scene s;
    scene_open(&s);
    char p[4300];
    kb_err e = {{0}};
    int created = -1;

    /* a symbolic link: refused, read or write, even with O_CREAT */
    snprintf(p, sizeof p, "%s/link", s.dir);
    plant(s.victim, p);
    ck_assert_int_eq(kb_open_shared(p, O_RDONLY, 0, NULL, &e), -1);
    ck_assert_int_eq(errno, ELOOP);
    ck_assert_msg(strstr(e.msg, "symbolic link"), "%s", e.msg);
    ck_assert_int_eq(kb_open_shared(p, O_RDWR | O_CREAT, 0666, &created, &e), -1);
    ck_assert_int_eq(created, 0);
    /* a dangling one: nothing made at its target */
    char dangling[4300], target[4300];
    snprintf(target, sizeof target, "%s/made-through-a-link", s.out);
    snprintf(dangling, sizeof dangling, "%s/dangling", s.dir);
    plant(target, dangling);
    ck_assert_int_eq(kb_open_shared(dangling, O_RDWR | O_CREAT, 0666, NULL, &e), -1);
    ck_assert(!kbt_exists(target));

    /* a FIFO: refused at once, not waited on */
    snprintf(p, sizeof p, "%s/fifo", s.dir);
    ck_assert_int_eq(mkfifo(p, 0666), 0);
    ck_assert_int_eq(kb_open_shared(p, O_RDONLY, 0, NULL, &e), -1);
    ck_assert_msg(strstr(e.msg, "not a regular file"), "%s", e.msg);
    ck_assert_int_eq(kb_open_shared(p, O_WRONLY, 0, NULL, &e), -1);

    /* a hard link to the victim's file: read, but never opened to write */
    snprintf(p, sizeof p, "%s/hard", s.dir);
    ck_assert_int_eq(link(s.victim, p), 0);
    int fd = kb_open_shared(p, O_RDONLY, 0, NULL, &e);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(kb_open_shared(p, O_RDWR | O_TRUNC, 0, NULL, &e), -1);
    ck_assert_msg(strstr(e.msg, "2 links"), "%s", e.msg);

    /* made here: created = 1; there already: 0, and O_TRUNC cuts nothing */
    snprintf(p, sizeof p, "%s/new", s.dir);
    fd = kb_open_shared(p, O_RDWR | O_CREAT, 0600, &created, &e);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(created, 1);
    ck_assert_int_eq(write(fd, "abc", 3), 3);
    close(fd);
    fd = kb_open_shared(p, O_RDWR | O_CREAT | O_TRUNC, 0600, &created, &e);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(created, 0);
    close(fd);
    char *text = kbt_read(p, NULL);
    ck_assert_str_eq(text, "abc");
    free(text);

    /* a file of another user: read, never opened to write (needs root to make) */
    if (geteuid() == 0) {
        ck_assert_int_eq(chown(p, 65534, 65534), 0);
        fd = kb_open_shared(p, O_RDONLY, 0, NULL, &e);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(kb_open_shared(p, O_WRONLY, 0, NULL, &e), -1);
        ck_assert_msg(strstr(e.msg, "owned by uid 65534"), "%s", e.msg);
    }
    victim_untouched(s.victim, "kb_open_shared");
    scene_close(&s);
}
END_TEST

START_TEST(private_dir_made_0700_and_checked)
{
    scene s;
    scene_open(&s);
    char p[4300];
    kb_err e = {{0}};
    umask(022);
    snprintf(p, sizeof p, "%s/mine", s.dir);
    ck_assert_msg(kb_private_dir(p, &e) == KB_OK, "%s", e.msg);
    struct stat st;
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(kb_private_dir(p, &e), KB_OK); /* there already: the same checks */

    ck_assert_int_eq(chmod(p, 0755), 0); /* others could reach it */
    ck_assert_int_eq(kb_private_dir(p, &e), KB_ERR_IO);
    ck_assert_msg(strstr(e.msg, "mode 0755, not 0700"), "%s", e.msg);
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0755); /* refused, not changed */

    snprintf(p, sizeof p, "%s/file", s.dir);
    kbt_write(p, "x");
    ck_assert_int_eq(kb_private_dir(p, &e), KB_ERR_IO);
    ck_assert_msg(strstr(e.msg, "not a folder"), "%s", e.msg);

    if (geteuid() == 0) {
        snprintf(p, sizeof p, "%s/theirs", s.dir);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        ck_assert_int_eq(chown(p, 65534, 65534), 0);
        ck_assert_int_eq(kb_private_dir(p, &e), KB_ERR_IO);
        ck_assert_msg(strstr(e.msg, "owned by uid 65534"), "%s", e.msg);
    }
    scene_close(&s);
}
END_TEST

/* ---- a symbolic link at each path kbench uses in a shared folder ---- */

START_TEST(symlink_at_gpu_lock)
{
    scene s;
    scene_open(&s);
    char p[4300];
    kb_gpu_lock_path(s.dir, "0000:cc:00.0", p, sizeof p);
    plant(s.victim, p);
    kb_gpu_lock l;
    kb_err e = {{0}};
    kb_gpu_lock_init(&l);
    ck_assert_int_eq(kb_gpu_lock_acquire(&l, p, "softmax_forward.tuned.bf16.8x8", NULL, &e),
                     KB_ERR_IO);
    ck_assert_msg(strstr(e.msg, "symbolic link") && strstr(e.msg, p), "%s", e.msg);
    ck_assert_int_eq(l.fd, -1);
    victim_untouched(s.victim, "GPU lock");
    scene_close(&s);
}
END_TEST

/* The server's lock file beside its socket, and the socket folder itself. */
static int never_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return 99;
}

START_TEST(symlink_at_server_lock_and_runtime_dir)
{
    scene s;
    scene_open(&s);
    char rundir[512], sock[4300], lockp[4400];
    kb_err e = {{0}};
    setenv("KBENCH_LOCK_DIR", s.dir, 1);
    unsetenv("XDG_RUNTIME_DIR");
    ck_assert_msg(kb_runtime_dir(rundir, sizeof rundir, &e) == KB_OK, "%s", e.msg);
    snprintf(sock, sizeof sock, "%s/srv-0-0.sock", rundir);
    snprintf(lockp, sizeof lockp, "%s.lock", sock);
    plant(s.victim, lockp);
    ck_assert_int_eq(kb_server_run(sock, -1, never_main), 1);
    ck_assert(!kbt_exists(sock)); /* no server came up */
    victim_untouched(s.victim, "server lock");

    /* <lock folder>/kbench-<uid> a link to a folder of the victim's: refused,
     * nothing made in that folder, its mode unchanged */
    kbt_rm_rf(rundir);
    char victim_dir[4300];
    snprintf(victim_dir, sizeof victim_dir, "%s/victim-dir", s.out);
    ck_assert_int_eq(mkdir(victim_dir, 0700), 0);
    plant(victim_dir, rundir);
    ck_assert_int_eq(kb_runtime_dir(rundir, sizeof rundir, &e), KB_ERR_IO);
    ck_assert_msg(strstr(e.msg, "symbolic link"), "%s", e.msg);
    char *argv[] = {"kbench", "--case", NULL};
    int rc = -1;
    ck_assert_int_eq(kb_server_client(2, argv, 0, &rc), 0); /* the case runs in process */
    struct stat st;
    ck_assert_int_eq(lstat(victim_dir, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0700);
    ck_assert_int_eq(st.st_nlink, 2); /* still empty: no socket, no lock file made in it */
    unsetenv("KBENCH_LOCK_DIR");
    scene_close(&s);
}
END_TEST

START_TEST(symlink_at_sol_cache)
{
    scene s;
    scene_open(&s);
    kb_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "NVIDIA Test GPU");
    char p[4300];
    snprintf(p, sizeof p, "%s/sol-NVIDIA_Test_GPU.txt", s.dir);
    /* The victim's file holds a whole cache: read through the link, the
     * run would take its numbers. */
    char whole[4300];
    snprintf(whole, sizeof whole, "%s/whole-cache", s.out);
    kbt_write(whole, "4274.1\nlaunch_floor_ms 0.0021\nlaunch_overhead_ms 0.0045\n"
                     "read_gbps 4650.5\nwrite_gbps 4420.0\nl2_flush_clean 1\n");
    plant(whole, p);
    kb_gpu_limits l;
    memset(&l, 0, sizeof l);
    ck_assert_int_eq(kb_gpu_limits_cached(&d, s.dir, &l), 0);
    /* the same file as a real cache is read: the refusal is the link's */
    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(rename(whole, p), 0);
    ck_assert_int_eq(kb_gpu_limits_cached(&d, s.dir, &l), 1);
    scene_close(&s);
}
END_TEST

static kb_status write_text(FILE *f, void *ctx, kb_err *e)
{
    (void)e;
    fputs((const char *)ctx, f);
    return KB_OK;
}

/* A cache file (SOL, GEMM peak) written where a link was planted, at the
 * file and at its temporary: the links are replaced, never followed. */
START_TEST(symlink_at_cache_file_and_its_temporary)
{
    scene s;
    scene_open(&s);
    char p[4300], tmp[4400];
    kb_err e = {{0}};
    snprintf(p, sizeof p, "%s/gemm-sol-NVIDIA_Test_GPU.txt", s.dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", p, (long)getpid());
    plant(s.victim, p);
    plant(s.victim, tmp);
    ck_assert_msg(kb_atomic_write(p, write_text, "989.5\n", &e) == KB_OK, "%s", e.msg);
    struct stat st;
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    char *text = kbt_read(p, NULL);
    ck_assert_str_eq(text, "989.5\n");
    free(text);
    ck_assert(!kbt_exists(tmp));
    victim_untouched(s.victim, "cache file");
    scene_close(&s);
}
END_TEST

START_TEST(symlink_at_plan_cache)
{
    scene s;
    scene_open(&s);
    char p[4300], meta[256], why[512], *payload = NULL;
    size_t n = 0;
    int found = 1;
    kb_err e = {{0}};
    snprintf(p, sizeof p, "%s/plan.plan", s.dir);
    plant(s.victim, p);
    ck_assert_int_eq(kb_plan_cache_read(p, meta, sizeof meta, &payload, &n, &found, why,
                                        sizeof why, &e),
                     KB_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_msg(strstr(why, "symbolic link"), "%s", why);
    ck_assert_msg(kb_plan_cache_write(p, "engine 7", "PLAN", 4, &e) == KB_OK, "%s", e.msg);
    ck_assert_int_eq(kb_plan_cache_read(p, meta, sizeof meta, &payload, &n, &found, why,
                                        sizeof why, &e),
                     KB_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_str_eq(meta, "engine 7");
    free(payload);
    victim_untouched(s.victim, "plan cache");
    scene_close(&s);
}
END_TEST

START_TEST(symlink_at_tuning_cache)
{
    scene s;
    scene_open(&s);
    char p[4300], tmp[4400];
    kb_err e = {{0}};
    const kb_tune_key k = {"NVIDIA H200", "softmax_forward", "bf16", "N<=4096,M<=32768"};
    snprintf(p, sizeof p, "%s/tuning.txt", s.dir);
    plant(s.victim, p); /* read as the cache to merge into: refused */
    ck_assert_int_eq(kb_tune_cache_store(p, &k, "threads=256", 3890.5, &e), KB_ERR_IO);
    ck_assert_msg(strstr(e.msg, "symbolic link"), "%s", e.msg);
    ck_assert_int_eq(unlink(p), 0);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", p, (long)getpid());
    plant(s.victim, tmp); /* its temporary: replaced */
    ck_assert_msg(kb_tune_cache_store(p, &k, "threads=256", 3890.5, &e) == KB_OK, "%s", e.msg);
    char *text = kbt_read(p, NULL);
    ck_assert_ptr_nonnull(strstr(text, "threads=256"));
    free(text);
    victim_untouched(s.victim, "tuning cache");
    scene_close(&s);
}
END_TEST

static kb_status add_row(kb_baseline *b, void *ctx, kb_err *e)
{
    kb_baseline_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.benchmark, sizeof r.benchmark, "softmax_forward");
    snprintf(r.backend, sizeof r.backend, "%s", (const char *)ctx);
    snprintf(r.dtype, sizeof r.dtype, "bf16");
    r.M = r.N = 1024;
    r.median_ms = 0.01;
    r.gbps = 1000;
    r.q1_ms = r.q3_ms = r.sm_mhz = NAN;
    return kb_baseline_upsert(b, &r, e);
}

/* The baseline's temporary, and the baseline itself a link: the link is
 * replaced by the file written, the victim's file untouched. */
START_TEST(symlink_at_baseline_and_its_temporary)
{
    scene s;
    scene_open(&s);
    char p[4300], tmp[4400];
    kb_err e = {{0}};
    snprintf(p, sizeof p, "%s/NVIDIA_Test_GPU.csv", s.dir);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", p, (long)getpid());
    plant(s.victim, tmp);
    ck_assert_msg(kb_baseline_update(p, add_row, "fused", NULL, &e) == KB_OK, "%s", e.msg);
    victim_untouched(s.victim, "baseline temporary");
    ck_assert(!kbt_exists(tmp));
    ck_assert_int_eq(unlink(p), 0);
    /* the victim's file is no baseline: a parse error, nothing written */
    plant(s.victim, p);
    ck_assert_int_eq(kb_baseline_update(p, add_row, "fused", NULL, &e), KB_ERR_PARSE);
    victim_untouched(s.victim, "baseline");
    scene_close(&s);
}
END_TEST

/* ---- the GPU lock of another user, or a hard link to a file of ours ---- */

/* The lock made here is 0644 whatever the umask (every user can lock it),
 * and one planted as a hard link to the victim's file is locked but never
 * written or chmodded. */
START_TEST(gpu_lock_modes_and_foreign_files)
{
    scene s;
    scene_open(&s);
    char p[4300];
    kb_err e = {{0}};
    kb_gpu_lock l;
    kb_gpu_lock_init(&l);
    kb_gpu_lock_path(s.dir, "0000:dd:00.0", p, sizeof p);
    umask(077);
    ck_assert_msg(kb_gpu_lock_acquire(&l, p, "first", NULL, &e) == KB_OK, "%s", e.msg);
    struct stat st;
    ck_assert_int_eq(lstat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0644);
    kb_gpu_lock_release(&l);
    umask(022);

    ck_assert_int_eq(unlink(p), 0);
    ck_assert_int_eq(link(s.victim, p), 0);
    ck_assert_msg(kb_gpu_lock_acquire(&l, p, "second", NULL, &e) == KB_OK, "%s", e.msg);
    /* locked: another descriptor of the file cannot take it */
    const int other = open(p, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(other, 0);
    ck_assert_int_eq(flock(other, LOCK_EX | LOCK_NB), -1);
    close(other);
    kb_gpu_lock_release(&l);
    victim_untouched(s.victim, "GPU lock (hard link)");

    if (geteuid() == 0) { /* a lock file of another user: locked, never written */
        ck_assert_int_eq(unlink(p), 0);
        kbt_write(p, "pid 1 theirs\n");
        ck_assert_int_eq(chmod(p, 0644), 0);
        ck_assert_int_eq(chown(p, 65534, 65534), 0);
        ck_assert_msg(kb_gpu_lock_acquire(&l, p, "root", NULL, &e) == KB_OK, "%s", e.msg);
        kb_gpu_lock_release(&l);
        char *text = kbt_read(p, NULL);
        ck_assert_str_eq(text, "pid 1 theirs\n");
        free(text);
        ck_assert_int_eq(lstat(p, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0644);
        ck_assert_int_eq(st.st_uid, 65534);
    }
    scene_close(&s);
}
END_TEST

Suite *kb_suite_shared(void)
{
    Suite *s = suite_create("shared");
    TCase *t = tcase_create("shared folders");
    tcase_set_timeout(t, 30);
    tcase_add_test(t, open_shared_refuses_links_fifos_and_strangers);
    tcase_add_test(t, private_dir_made_0700_and_checked);
    tcase_add_test(t, symlink_at_gpu_lock);
    tcase_add_test(t, symlink_at_server_lock_and_runtime_dir);
    tcase_add_test(t, symlink_at_sol_cache);
    tcase_add_test(t, symlink_at_cache_file_and_its_temporary);
    tcase_add_test(t, symlink_at_plan_cache);
    tcase_add_test(t, symlink_at_tuning_cache);
    tcase_add_test(t, symlink_at_baseline_and_its_temporary);
    tcase_add_test(t, gpu_lock_modes_and_foreign_files);
    suite_add_tcase(s, t);
    return s;
}
