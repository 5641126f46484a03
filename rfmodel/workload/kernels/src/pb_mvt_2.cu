// rfmodel: description = PolyBench mvt, second product: x2 += A^T y2, one thread per column of A walking down it (coalesced across the warp), the sum updated in global memory.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 16
// rfmodel: trip = 4096
// rfmodel: category = memory-bound, cache-sensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC mvt
// rfmodel: original = PolyBench-ACC CUDA/linear-algebra/kernels/mvt/mvt.cu: mvt_kernel2 (256x1 threads, standard dataset N = 4096)
// rfmodel: papers = cerf
// rfmodel: original_regs = 22
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of A: the standard dataset's, fixed at compile time as in the original.
#define PB_MVT_N 4096

// Thread i adds A[j][i] * y2[j] for every j onto x2[i] in place.
extern "C" __global__ void pb_mvt_2(int n, float* A, float* x2, float* y2)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < n) {
        for (int row = 0; row < n; row++) {
            x2[col] += A[row * PB_MVT_N + col] * y2[row];
        }
    }
}
