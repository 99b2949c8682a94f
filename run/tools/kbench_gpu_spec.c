/* kbench-gpu-spec FILE: the test CTest runs first (fixture kb_gpus) to write
 * the resource spec for the GPUs this process sees. A separate small program
 * so that it starts in milliseconds: it loads no kernel. */
#include <stdio.h>
#include <string.h>

#include "gpuspec.h"

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: kbench-gpu-spec FILE\n"
               "Writes the CTest resource spec (one 'gpus' resource per visible GPU, one slot\n"
               "each; a placeholder without a GPU) to FILE. Run by ctest as kbench.gpu_spec.\n");
        return 0;
    }
    if (argc != 2 || argv[1][0] == '-' || !argv[1][0]) {
        fprintf(stderr, "usage: kbench-gpu-spec FILE (see --help)\n");
        return 2;
    }
    int n = 0;
    cudaError_t rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) n = 0;
    kb_err e = {{0}}, why = {{0}};
    if (kb_gpuspec_write(argv[1], n, &e) != KB_OK) {
        fprintf(stderr, "Error: %s\n", kb_err_text(&e));
        return 1;
    }
    /* kbench's own words for the missing GPU (a missing driver is not an
     * "insufficient" one), so the setup test and the cases' SKIPs agree */
    if (n == 0) {
        kb_no_gpu(rc, cudaGetErrorString(rc), kb_cuda_driver_found(), &why);
        printf("%s: GPU cases will report SKIP; wrote %s\n", kb_err_text(&why), argv[1]);
    } else {
        printf("%d GPU(s), %d case(s) per GPU at a time; wrote %s\n", n, KB_GPUSPEC_SLOTS,
               argv[1]);
    }
    return 0;
}
