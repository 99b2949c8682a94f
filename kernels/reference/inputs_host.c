/* Host copy of the input generator (input_values.h) for the unit tests:
 * the same formulas as the GPU's, so the kinds' definitions and the CPU
 * reference on them are checked without a GPU. randn may differ from the
 * device's in the last bit (cos instead of cospif); nothing compares the
 * two bit for bit (the GPU self-test checks the GPU's own inputs). */
#include "half.h"
#include "input_values.h"
#include "reference.h"

void kb_inputs_host(kb_inputs kind, kb_bench_id b, kb_dtype d, uint64_t seed, int64_t M,
                    int64_t N, float *x, int64_t *target)
{
    const kb_input_keys k = kb_input_keys_of(seed);
    const kb_x_dist dist = kb_bench_info_get(b)->x_dist;
    for (int64_t r = 0; r < M; r++) {
        for (int64_t j = 0; x && j < N; j++)
            x[r * N + j] = kb_round_to(d, kb_input_x(kind, dist, &k, r, j, N));
        if (target) target[r] = kb_column_of(kb_elem_hash(k.target, r), N);
    }
}
