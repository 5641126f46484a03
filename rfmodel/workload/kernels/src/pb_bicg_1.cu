// rfmodel: description = PolyBench bicg, first half: s = A^T r, one thread per column j of A walking down the column (coalesced across the warp), accumulating in global memory.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 16
// rfmodel: trip = 4096
// rfmodel: category = memory-bound, cache-sensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC bicg
// rfmodel: original = PolyBench-ACC CUDA/linear-algebra/kernels/bicg/bicg.cu: bicg_kernel1 (256x1 threads, standard dataset NX = NY = 4096)
// rfmodel: papers = cerf
// rfmodel: original_regs = 22
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of A: the standard dataset's, a compile-time constant as in the original; the extents are
// parameters so a smaller problem uses the top-left corner of the same layout.
#define PB_BICG_NY 4096

// Thread j owns s[j]: it clears it and then adds r[i] * A[i][j] row by row. The sum stays in memory (s may
// alias A or r as far as the compiler knows), so each step reloads and stores s[j].
extern "C" __global__ void pb_bicg_1(int nx, int ny, float* A, float* r, float* s)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < ny) {
        s[col] = 0.0f;
        for (int row = 0; row < nx; row++) {
            s[col] += r[row] * A[row * PB_BICG_NY + col];
        }
    }
}
