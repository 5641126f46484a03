// rfmodel: description = PolyBench mvt, first product: x1 += A y1, one thread per row of A walking along its row (uncoalesced across the warp), the sum updated in global memory.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 16
// rfmodel: trip = 4096
// rfmodel: category = memory-bound, cache-sensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC mvt
// rfmodel: original = PolyBench-ACC CUDA/linear-algebra/kernels/mvt/mvt.cu: mvt_kernel1 (256x1 threads, standard dataset N = 4096)
// rfmodel: papers = cerf
// rfmodel: original_regs = 22
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of A: the standard dataset's, fixed at compile time as in the original.
#define PB_MVT_N 4096

// Thread i adds A[i][j] * y1[j] for every j onto x1[i] in place (no local accumulator, as the original).
extern "C" __global__ void pb_mvt_1(int n, float* A, float* x1, float* y1)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n) {
        for (int col = 0; col < n; col++) {
            x1[row] += A[row * PB_MVT_N + col] * y1[col];
        }
    }
}
