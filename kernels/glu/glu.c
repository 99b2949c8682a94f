/* kb_glu_fwd_launch / kb_glu_bwd_launch: the backend by name (glu.h). */
#include "glu.h"

#include <string.h>

kb_status kb_glu_fwd_launch(const char *backend, kb_dtype dt, kb_glu_act act, const void *gate,
                            const void *up, int64_t ld_in, void *out, int64_t M, int64_t H,
                            cudaStream_t s, kb_err *e)
{
    if (backend && strcmp(backend, "fused") == 0)
        return kb_glu_fused_fwd(dt, act, gate, up, ld_in, out, M, H, s, e);
    if (backend && strcmp(backend, "tuned") == 0) {
        const kb_glu_cfg c = kb_glu_tuned_heuristic(dt, 0, M, H, 0);
        return kb_glu_tuned_fwd(&c, 0, dt, act, gate, up, ld_in, out, M, H, s, e);
    }
    return KB_FAIL(e, KB_ERR_ARG, "glu forward: unknown backend '%s' (expected fused or tuned)",
                   backend ? backend : "(null)");
}

kb_status kb_glu_bwd_launch(const char *backend, kb_dtype dt, kb_glu_act act, const void *gate,
                            const void *up, const void *dy, int64_t ld_in, void *dgate,
                            void *dup, int64_t M, int64_t H, cudaStream_t s, kb_err *e)
{
    if (backend && strcmp(backend, "fused") == 0)
        return kb_glu_fused_bwd(dt, act, gate, up, dy, ld_in, dgate, dup, M, H, s, e);
    if (backend && strcmp(backend, "tuned") == 0) {
        const kb_glu_cfg c = kb_glu_tuned_heuristic(dt, 1, M, H, 0);
        return kb_glu_tuned_bwd(&c, 0, dt, act, gate, up, dy, ld_in, dgate, dup, M, H, s, e);
    }
    return KB_FAIL(e, KB_ERR_ARG, "glu backward: unknown backend '%s' (expected fused or tuned)",
                   backend ? backend : "(null)");
}
