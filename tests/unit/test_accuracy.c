/* The normwise criterion (tolerance.h) and the guard-band scan (guard.h):
 * pure host functions, the same ones the GPU check calls on its sums and on
 * host copies of the bands. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "guard.h"
#include "tolerance.h"
#include "unit.h"

START_TEST(unit_roundoffs)
{
    ck_assert_double_eq(kb_unit_roundoff(KB_BF16), 1.0 / 256);
    ck_assert_double_eq(kb_unit_roundoff(KB_FP16), 1.0 / 2048);
    ck_assert_double_eq(kb_unit_roundoff(KB_FP32), 1.0 / 16777216);
    ck_assert_double_eq(kb_normwise_bound(KB_BF16), KB_NORMWISE_C / 256);
}
END_TEST

/* ||gold|| = 2, no fp32 allowance (s = 0): the bf16 bound is 4 * 2^-8 * 2 =
 * 1/32 exactly, so ||out - gold|| = 1/32 (err2 = 2^-10) sits on the edge and
 * passes; a hair more (1e-15 relative: the square root halves it) fails. */
START_TEST(bound_edge)
{
    const double edge2 = 1.0 / 1024;
    ck_assert_double_eq(kb_normwise_excess(edge2, 4.0, 0.0, KB_BF16), 1.0);
    ck_assert(kb_normwise_excess(edge2 * (1 + 1e-15), 4.0, 0.0, KB_BF16) > 1.0);
    ck_assert(kb_normwise_excess(nextafter(edge2, 0.0), 4.0, 0.0, KB_BF16) <= 1.0);
    /* fp16: 4 * 2^-11 * 2 = 2^-8 */
    ck_assert_double_eq(kb_normwise_excess(1.0 / 65536, 4.0, 0.0, KB_FP16), 1.0);
    ck_assert(kb_normwise_excess(1.0 / 65536 * 1.000001, 4.0, 0.0, KB_FP16) > 1.0);
}
END_TEST

/* The fp32 allowance adds KB_NORMWISE_C32 * 2^-24 * ||s||. */
START_TEST(fp32_allowance)
{
    /* fp32: (4 + 32) * 2^-24 with ||gold|| = ||s|| = 1 */
    const double edge = (KB_NORMWISE_C + KB_NORMWISE_C32) / 16777216.0;
    ck_assert_double_eq_tol(kb_normwise_excess(edge * edge, 1.0, 1.0, KB_FP32), 1.0, 1e-12);
    ck_assert(kb_normwise_excess(edge * edge * 1.0001, 1.0, 1.0, KB_FP32) > 1.0);
    /* a cancelling row: gold tiny, s large: the allowance carries it */
    ck_assert(kb_normwise_excess(1e-14, 1e-12, 1.0, KB_BF16) <= 1.0);
    ck_assert(kb_normwise_excess(1e-10, 1e-12, 1.0, KB_BF16) > 1.0);
}
END_TEST

/* A 3 % scale error fails a bf16 row whatever its magnitude (all below atol
 * included); 1 % passes in bf16 and fails in fp16. */
START_TEST(scale_errors)
{
    const double g2 = 4096 * 1e-8; /* 4096 values of 1e-4 */
    ck_assert(kb_normwise_excess(0.03 * 0.03 * g2, g2, g2, KB_BF16) > 1.0);
    ck_assert(kb_normwise_excess(0.01 * 0.01 * g2, g2, g2, KB_BF16) <= 1.0);
    ck_assert(kb_normwise_excess(0.01 * 0.01 * g2, g2, g2, KB_FP16) > 1.0);
}
END_TEST

START_TEST(zero_rows)
{
    ck_assert_double_eq(kb_normwise_excess(0.0, 0.0, 0.0, KB_BF16), 0.0);
    ck_assert(isnan(kb_normwise_excess(1e-12, 0.0, 0.0, KB_BF16)));
    ck_assert_double_eq(kb_normwise_excess(0.0, 3.0, 0.0, KB_BF16), 0.0);
}
END_TEST

/* A host buffer laid out as the device one: band, 10 bf16 elements, padding
 * to 32 bytes, band. */
typedef struct {
    unsigned char mem[KB_GUARD_BYTES + 32 + KB_GUARD_BYTES];
    kb_guard g;
} host_guarded;

static void host_guarded_init(host_guarded *h)
{
    memset(h->mem, KB_GUARD_PATTERN, sizeof h->mem);
    memset(h->mem + KB_GUARD_BYTES, 0, 20);
    h->g.name = "output";
    h->g.before = h->mem;
    h->g.after = h->mem + KB_GUARD_BYTES + 20;
    h->g.after_bytes = 12 + KB_GUARD_BYTES;
    h->g.elem_bytes = 2;
}

static int judge(host_guarded *h, char *msg, size_t len)
{
    return kb_guard_judge(&h->g, h->g.before, h->g.after, msg, len);
}

START_TEST(guard_intact)
{
    host_guarded h;
    char msg[256] = "";
    host_guarded_init(&h);
    ck_assert_int_eq(judge(&h, msg, sizeof msg), 0);
    ck_assert_int_eq(kb_guard_first_after(h.g.after, h.g.after_bytes), -1);
    ck_assert_int_eq(kb_guard_first_before(h.g.before, KB_GUARD_BYTES), -1);
}
END_TEST

/* Element 1 past the end (bytes 2..3 after it, inside the alignment
 * padding): reported with its offset. */
START_TEST(guard_write_past_end)
{
    host_guarded h;
    char msg[256] = "";
    host_guarded_init(&h);
    unsigned char *data = h.mem + KB_GUARD_BYTES;
    data[20 + 2] = 0x12;
    data[20 + 3] = 0x34;
    data[20 + 100] = 0; /* further out: the first offset wins */
    ck_assert_int_eq(judge(&h, msg, sizeof msg), 1);
    ck_assert_int_eq(kb_guard_first_after(h.g.after, h.g.after_bytes), 2);
    ck_assert_msg(strstr(msg, "output: written past its end") &&
                      strstr(msg, "offset 2 after the end") && strstr(msg, "element 1 past"),
                  "message: %s", msg);
    /* and a write at the far end of the band, beyond the padding */
    host_guarded_init(&h);
    h.mem[sizeof h.mem - 1] = 0;
    ck_assert_int_eq(judge(&h, msg, sizeof msg), 1);
    ck_assert_int_eq(kb_guard_first_after(h.g.after, h.g.after_bytes), 12 + KB_GUARD_BYTES - 1);
}
END_TEST

START_TEST(guard_write_before_start)
{
    host_guarded h;
    char msg[256] = "";
    host_guarded_init(&h);
    h.mem[KB_GUARD_BYTES - 2] = 0; /* the second byte before the start */
    h.mem[10] = 0;
    ck_assert_int_eq(judge(&h, msg, sizeof msg), 1);
    ck_assert_int_eq(kb_guard_first_before(h.g.before, KB_GUARD_BYTES), 2);
    ck_assert_msg(strstr(msg, "written before its start") && strstr(msg, " 2 bytes before") &&
                      strstr(msg, "element -1"),
                  "message: %s", msg);
}
END_TEST

Suite *kb_suite_accuracy(void)
{
    Suite *s = suite_create("accuracy");
    TCase *n = tcase_create("normwise");
    tcase_add_test(n, unit_roundoffs);
    tcase_add_test(n, bound_edge);
    tcase_add_test(n, fp32_allowance);
    tcase_add_test(n, scale_errors);
    tcase_add_test(n, zero_rows);
    suite_add_tcase(s, n);
    TCase *g = tcase_create("guard");
    tcase_add_test(g, guard_intact);
    tcase_add_test(g, guard_write_past_end);
    tcase_add_test(g, guard_write_before_start);
    suite_add_tcase(s, g);
    return s;
}
