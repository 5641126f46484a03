// rfmodel: description = PolyBench bicg, second half: q = A p, one thread per row i of A walking along the row (each thread its own row: uncoalesced, cache-reliant), accumulating in global memory.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 16
// rfmodel: trip = 4096
// rfmodel: category = memory-bound, cache-sensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC bicg
// rfmodel: original = PolyBench-ACC CUDA/linear-algebra/kernels/bicg/bicg.cu: bicg_kernel2 (256x1 threads, standard dataset NX = NY = 4096)
// rfmodel: papers = cerf
// rfmodel: original_regs = 22
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of A: the standard dataset's, fixed at compile time as in the original.
#define PB_BICG_NY 4096

// Thread i owns q[i]: cleared, then A[i][j] * p[j] added for every column j, the running sum kept in memory.
extern "C" __global__ void pb_bicg_2(int nx, int ny, float* A, float* p, float* q)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < nx) {
        q[row] = 0.0f;
        for (int col = 0; col < ny; col++) {
            q[row] += A[row * PB_BICG_NY + col] * p[col];
        }
    }
}
