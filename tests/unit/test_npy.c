/* .npy writer: exact header bytes (magic, version, dict, 64-byte padding)
 * and data round trips for every dtype. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "half.h"
#include "npy.h"
#include "tmpfiles.h"
#include "unit.h"

/* Checks the fixed parts of a v1.0 header and that its dict is exactly
 * `dict`, padded with spaces, '\n'-terminated, data at total_len. */
static void check_header_bytes(const char *buf, size_t len, const char *dict, size_t total_len)
{
    ck_assert_uint_ge(len, total_len);
    ck_assert_int_eq(memcmp(buf, "\x93NUMPY\x01\x00", 8), 0);
    size_t hlen = (unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8;
    ck_assert_uint_eq(10 + hlen, total_len);
    ck_assert_uint_eq(total_len % 64, 0);
    ck_assert_int_eq(memcmp(buf + 10, dict, strlen(dict)), 0);
    for (size_t i = 10 + strlen(dict); i < total_len - 1; i++) ck_assert_int_eq(buf[i], ' ');
    ck_assert_int_eq(buf[total_len - 1], '\n');
}

/* Each test's scratch folder, made and removed around it by the checked
 * fixture. */
static char dir[4096];

static void make_dir(void)
{
    kbt_tmpdir(dir);
}

static void remove_dir(void)
{
    kbt_rm_rf(dir);
}

/* dir/name into path (4200 bytes). */
static void in_dir(char *path, const char *name)
{
    snprintf(path, 4200, "%s/%s", dir, name);
}

START_TEST(header_bytes_exact)
{
    char path[4200];
    in_dir(path, "a.npy");
    kb_err e = {{0}};
    float v[12];
    for (int i = 0; i < 12; i++) v[i] = (float)i;
    const int64_t shape[2] = {3, 4};
    ck_assert_msg(kb_npy_write_f32(path, v, 2, shape, &e) == KB_OK, "%s", e.msg);
    size_t len;
    char *buf = kbt_read(path, &len);
    ck_assert_ptr_nonnull(buf);
    /* Numpy's own layout for np.save of a float32 (3, 4) array: version 1.0,
     * header length 118 (little endian), dict, spaces, '\n' at byte 127. */
    ck_assert_uint_eq(len, 128 + sizeof v);
    ck_assert_int_eq((unsigned char)buf[8], 118);
    ck_assert_int_eq((unsigned char)buf[9], 0);
    check_header_bytes(buf, len, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 128);
    ck_assert_int_eq(memcmp(buf + 128, v, sizeof v), 0);
    free(buf);

    /* 1-d: Python's one-element tuple "(5,)". */
    const int64_t s1[1] = {5};
    ck_assert_int_eq(kb_npy_write_f32(path, v, 1, s1, &e), KB_OK);
    buf = kbt_read(path, &len);
    check_header_bytes(buf, len, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", 128);
    ck_assert_uint_eq(len, 128 + 5 * 4);
    free(buf);

    /* 0-d scalar "()". */
    ck_assert_int_eq(kb_npy_write_f32(path, v + 7, 0, NULL, &e), KB_OK);
    buf = kbt_read(path, &len);
    check_header_bytes(buf, len, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", 128);
    ck_assert_uint_eq(len, 132);
    float got;
    memcpy(&got, buf + 128, 4);
    ck_assert_float_eq(got, 7.0f);
    free(buf);

    /* A long shape pushes the header past 128 bytes: padded to 192. */
    const int64_t big[8] = {1, 1000000000000LL, 0, 12345678901LL, 1, 1000000000000LL, 0,
                            12345678901LL};
    ck_assert_int_eq(kb_npy_write_f32(path, v, 8, big, &e), KB_OK);
    buf = kbt_read(path, &len);
    check_header_bytes(buf, len,
                       "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1000000000000, "
                       "0, 12345678901, 1, 1000000000000, 0, 12345678901), }",
                       192);
    ck_assert_uint_eq(len, 192); /* zero elements */
    free(buf);
}
END_TEST

START_TEST(read_header_matches)
{
    char path[4200];
    in_dir(path, "t.npy");
    kb_err e = {{0}};
    int64_t t[6] = {0, -1, 5, INT64_MAX, INT64_MIN, 42};
    const int64_t shape[3] = {1, 2, 3};
    ck_assert_int_eq(kb_npy_write_i64(path, t, 3, shape, &e), KB_OK);
    kb_npy_header h;
    ck_assert_msg(kb_npy_read_header(path, &h, &e) == KB_OK, "%s", e.msg);
    ck_assert_int_eq(h.major, 1);
    ck_assert_int_eq(h.minor, 0);
    ck_assert_str_eq(h.descr, "<i8");
    ck_assert_int_eq(h.fortran_order, 0);
    ck_assert_int_eq(h.ndim, 3);
    ck_assert_int_eq(h.shape[0], 1);
    ck_assert_int_eq(h.shape[1], 2);
    ck_assert_int_eq(h.shape[2], 3);
    ck_assert_uint_eq(h.data_offset, 128);
    size_t len;
    char *buf = kbt_read(path, &len);
    ck_assert_uint_eq(len, 128 + sizeof t);
    ck_assert_int_eq(memcmp(buf + 128, t, sizeof t), 0);
    free(buf);

    kbt_write(path, "not a numpy file at all");
    ck_assert_int_eq(kb_npy_read_header(path, &h, &e), KB_ERR_PARSE);
}
END_TEST

/* Writes n values of dtype _i and reads them back through the header. */
START_TEST(data_round_trip_each_dtype)
{
    const kb_dtype d = (kb_dtype)_i;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.npy", dir, kb_dtype_name(d));
    kb_err e = {{0}};
    /* More than one 4096-element conversion chunk, odd length. */
    enum { M = 3, N = 2731 };
    static float want[M * N];
    static uint16_t h16[M * N];
    static float f32[M * N];
    for (int i = 0; i < M * N; i++) {
        float v = (float)sin(0.37 * i) * (float)(1 + i % 97) * 1.7f;
        if (i == 5) v = INFINITY;
        if (i == 6) v = -0.0f;
        if (i == 7) v = 1e-7f; /* fp16 subnormal */
        want[i] = kb_round_to(d, v);
        if (d == KB_BF16) h16[i] = kb_float_to_bf16(v);
        if (d == KB_FP16) h16[i] = kb_float_to_fp16(v);
        f32[i] = v;
    }
    const void *data = d == KB_FP32 ? (const void *)f32 : (const void *)h16;
    const int64_t shape[2] = {M, N};
    ck_assert_msg(kb_npy_write(path, d, data, 2, shape, &e) == KB_OK, "%s", e.msg);

    kb_npy_header h;
    ck_assert_int_eq(kb_npy_read_header(path, &h, &e), KB_OK);
    ck_assert_str_eq(h.descr, d == KB_FP16 ? "<f2" : "<f4");
    ck_assert_int_eq(h.ndim, 2);
    ck_assert_int_eq(h.shape[0], M);
    ck_assert_int_eq(h.shape[1], N);
    size_t esz = d == KB_FP16 ? 2 : 4, len;
    char *buf = kbt_read(path, &len);
    ck_assert_uint_eq(len, h.data_offset + (size_t)M * N * esz);
    for (int i = 0; i < M * N; i++) {
        float got;
        if (d == KB_FP16) {
            uint16_t b;
            memcpy(&b, buf + h.data_offset + 2 * (size_t)i, 2);
            ck_assert_uint_eq(b, h16[i]); /* raw bits kept */
            got = kb_fp16_to_float(b);
        } else {
            memcpy(&got, buf + h.data_offset + 4 * (size_t)i, 4);
        }
        /* Lossless: bit-identical to the dtype value widened to float. */
        ck_assert_msg(kb_float_to_bits(got) == kb_float_to_bits(want[i]),
                      "%s element %d: got %a want %a", kb_dtype_name(d), i, got, want[i]);
    }
    free(buf);
}
END_TEST

START_TEST(bad_arguments)
{
    char path[4200];
    in_dir(path, "x.npy");
    kb_err e = {{0}};
    float v[4] = {0};
    const int64_t neg[1] = {-1};
    ck_assert_int_eq(kb_npy_write_f32(path, v, 1, neg, &e), KB_ERR_ARG);
    const int64_t ok[1] = {4};
    ck_assert_int_eq(kb_npy_write_f32(path, v, 9, ok, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_npy_write_raw(path, "<f'4", 4, v, 1, ok, &e), KB_ERR_ARG);
    ck_assert_int_eq(kb_npy_write(path, KB_NUM_DTYPES, v, 1, ok, &e), KB_ERR_ARG);
    const int64_t huge[2] = {INT64_MAX, INT64_MAX};
    ck_assert_int_eq(kb_npy_write_f32(path, v, 2, huge, &e), KB_ERR_ARG);
    ck_assert(!kbt_exists(path));
    snprintf(path, sizeof path, "%s/no/dir/x.npy", dir);
    ck_assert_int_eq(kb_npy_write_f32(path, v, 1, ok, &e), KB_ERR_IO);
    /* A raw one-byte type works too. */
    snprintf(path, sizeof path, "%s/u8.npy", dir);
    const unsigned char bytes[3] = {1, 2, 255};
    const int64_t s3[1] = {3};
    ck_assert_int_eq(kb_npy_write_raw(path, "|u1", 1, bytes, 1, s3, &e), KB_OK);
    kb_npy_header h;
    ck_assert_int_eq(kb_npy_read_header(path, &h, &e), KB_OK);
    ck_assert_str_eq(h.descr, "|u1");
    ck_assert_int_eq(h.shape[0], 3);
}
END_TEST

/* A v1.0 .npy header at path whose dict gives shape (the tuple's text),
 * padded as NumPy pads it; no data. */
static void write_header_with_shape(const char *path, const char *shape)
{
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }",
                     shape);
    ck_assert(n > 0 && n < 100);
    unsigned char buf[128];
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = 128 - 10;
    buf[9] = 0;
    memset(buf + 10, ' ', sizeof buf - 10);
    memcpy(buf + 10, dict, (size_t)n);
    buf[127] = '\n';
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, sizeof buf, f), sizeof buf);
    ck_assert_int_eq(fclose(f), 0);
}

/* NumPy writes sizes: a negative one, or one no int64 holds (strtoll
 * saturated it to INT64_MAX), is refused naming the text, not read. */
START_TEST(read_header_refuses_bad_sizes)
{
    char path[4200];
    in_dir(path, "s.npy");
    kb_npy_header h;
    kb_err e = {{0}};
    write_header_with_shape(path, "(3, 4)"); /* the hand-made header itself reads */
    ck_assert_msg(kb_npy_read_header(path, &h, &e) == KB_OK, "%s", e.msg);
    ck_assert(h.ndim == 2 && h.shape[0] == 3 && h.shape[1] == 4);
    static const char *const bad[][2] = {
        {"(-5,)", "'-5', not a size"},
        {"(99999999999999999999,)", "'99999999999999999999', not a size"},
        {"(2, -1)", "'-1', not a size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_header_with_shape(path, bad[i][0]);
        e.msg[0] = '\0';
        ck_assert_msg(kb_npy_read_header(path, &h, &e) == KB_ERR_PARSE, "%s read", bad[i][0]);
        ck_assert_msg(strstr(e.msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], e.msg);
    }
}
END_TEST

Suite *kb_suite_npy(void)
{
    Suite *s = suite_create("npy");
    TCase *t = tcase_create("npy");
    tcase_add_checked_fixture(t, make_dir, remove_dir);
    tcase_add_test(t, header_bytes_exact);
    tcase_add_test(t, read_header_matches);
    tcase_add_loop_test(t, data_round_trip_each_dtype, 0, KB_NUM_DTYPES);
    tcase_add_test(t, bad_arguments);
    tcase_add_test(t, read_header_refuses_bad_sizes);
    suite_add_tcase(s, t);
    return s;
}
