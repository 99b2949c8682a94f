/* Small file-system helpers shared by the harness, the tuner and the report. */
#ifndef KB_FILES_H
#define KB_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kbench.h"

#ifdef __cplusplus
extern "C" {
#endif

/* mkdir -p: path and every missing parent; KB_ERR_IO naming the component
 * that could not be made, or when path exists but is not a directory. */
kb_status kb_mkdir_p(const char *path, kb_err *e);
/* kb_mkdir_p of the directory that holds file path (nothing without a '/'). */
kb_status kb_mkdir_parent(const char *path, kb_err *e);

/* A GPU name as one path component ("NVIDIA H200" -> "NVIDIA_H200"): blanks
 * and separators become '_', an empty name "unknown_gpu". Baselines, the SOL
 * cache and the tuning cache all name their files this way. */
void kb_gpu_file_name(const char *gpu_name, char *buf, size_t len);

/* Whether an input file a run reads may be used, before any GPU work; what
 * names it in messages ("baseline file", "tuning cache"). A path the user
 * named (explicit) must exist unless the run will write it (will_write),
 * else KB_ERR_ARG, with missing_hint (the caller's own options) in
 * parentheses when not NULL; a default path may be absent. *missing = 1
 * when it does not exist. A directory or an unreadable file is an error. */
kb_status kb_input_file_check(const char *what, const char *path, int explicit_path,
                              int will_write, const char *missing_hint, int *missing, kb_err *e);

/* printf(fmt, ...) into path[len], a file or folder name. Cut to fit it
 * would name another file (a parent, another case's, one read or written
 * in place of the one meant), so a name that does not fit is KB_ERR_ARG:
 * "<what> '<named, first 60 characters>...': path longer than <len-1>
 * characters", what being the option or variable the user named it by. */
kb_status kb_path_print(char *path, size_t len, const char *what, const char *named, kb_err *e,
                        const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* ---- files in folders other users can write to ----------------------------
 * /tmp, a lock folder that containers share, a shared cache folder: another
 * local user may have put anything at a path kbench uses there before it
 * does: a symbolic link to one of our files (fs.protected_symlinks is 0 on
 * many hosts), a hard link to one (fs.protected_hardlinks likewise), a FIFO
 * that blocks open(), a file of their own. kb_open_shared opens such a file
 * as OpenSSH, systemd and PostgreSQL open theirs:
 *   - O_NOFOLLOW: a symbolic link at the path is refused (ELOOP), never
 *     followed; O_CLOEXEC: nothing kbench starts inherits the descriptor;
 *   - O_NONBLOCK while opening, so that a FIFO cannot block the open
 *     (cleared once the file is known to be a regular file);
 *   - fstat of the descriptor, not of the path (no window between check and
 *     use): anything but a regular file is refused, and where the file is
 *     opened for writing it must be ours and have exactly one link (a hard
 *     link planted to a file of ours elsewhere is refused);
 *   - O_CREAT is tried with O_EXCL first: *created (may be NULL) says that
 *     this call made the file (only such a file is ever chmodded), and an
 *     existing file is opened without O_CREAT (fs.protected_regular refuses
 *     O_CREAT on another user's file in a sticky folder, even to read it).
 * O_TRUNC is never applied (it would cut a file before the checks): truncate
 * with ftruncate once the descriptor is known to be ours. Returns the
 * descriptor, or -1 with e naming the path and the reason and errno set: the
 * open's own (ENOENT: absent, ELOOP: a symbolic link) or EPERM (refused
 * after fstat). */
int kb_open_shared(const char *path, int flags, mode_t mode, int *created, kb_err *e);

/* The first len-1 bytes of a small cache file into buf, NUL-terminated,
 * opened with kb_open_shared (read-only); the bytes read, 0 ("" in buf)
 * when it is absent or refused: a cache that cannot be read is measured
 * again. */
size_t kb_read_small(const char *path, char *buf, size_t len);

/* A folder only this user can enter, for the case servers' sockets: made
 * with mkdir(0700) when absent, then checked with lstat: a directory (not a
 * symbolic link to one), owned by us, mode exactly 0700. Anything else is
 * KB_ERR_IO naming the folder and what is wrong with it; nothing is changed
 * (a folder of the wrong mode is the user's to fix, not ours to chmod). */
kb_status kb_private_dir(const char *path, kb_err *e);

/* An advisory lock across a read-modify-write of the file at path (re-read,
 * merge, write a temporary, rename over path): flock(LOCK_EX) on the folder
 * that holds it, opened read-only. Not the file itself: the rename replaces
 * its inode, and a lock on the old one keeps no later writer out. Not a
 * "<path>.lock" beside it: that is one more file in a folder under version
 * control (baselines/) and one more path that could be planted in a shared
 * folder. flock works on a read-only descriptor, so a folder of another
 * user (a shared cache) locks as well; the lock serialises the writers of
 * every file of the folder, which are rare and take milliseconds. Blocks
 * until held; returns the descriptor for kb_unlock, or -1 with e set
 * (KB_ERR_IO naming the folder). */
int kb_lock_parent(const char *path, kb_err *e);
/* Releases a kb_lock_parent lock (fd < 0: nothing). */
void kb_unlock(int fd);

/* Seconds on the monotonic clock, for wall-time phases and waits. */
double kb_mono_s(void);

/* FNV-1a (64-bit) of n bytes, continuing from h (KB_FNV1A_BASIS to start):
 * file checksums and names made from what they must match. */
#define KB_FNV1A_BASIS 0xcbf29ce484222325ull
uint64_t kb_fnv1a(uint64_t h, const void *data, size_t n);

#ifdef __cplusplus
}
#endif
#endif
