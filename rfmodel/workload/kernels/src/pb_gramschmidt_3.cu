// rfmodel: description = PolyBench gramschmidt, step 3 of column k: for each later column j, R[k][j] = Q[:,k] . A[:,j] summed in global memory, then A[:,j] -= Q[:,k] * R[k][j]; one thread per column, two passes down the rows.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 8
// rfmodel: trip = 2048
// rfmodel: category = memory-bound, cache-insensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC gramschmidt
// rfmodel: original = PolyBench-ACC CUDA/linear-algebra/solvers/gramschmidt/gramschmidt.cu: gramschmidt_kernel3 (256x1 threads, standard dataset NI = NJ = 2048)
// rfmodel: papers = cerf
// rfmodel: original_regs = 24
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of A, R and Q: the standard dataset's, fixed at compile time as in the original.
#define PB_GS_NJ 2048

// Thread j (only columns right of k) first projects column j on column k of Q, accumulating R[k][j] in
// memory, then removes that projection from column j of A.
extern "C" __global__ void pb_gramschmidt_3(int ni, int nj, float* A, float* R, float* Q, int k)
{
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col > k && col < nj) {
        R[k * PB_GS_NJ + col] = 0.0f;
        for (int row = 0; row < ni; row++) {
            R[k * PB_GS_NJ + col] += Q[row * PB_GS_NJ + k] * A[row * PB_GS_NJ + col];
        }
        for (int row = 0; row < ni; row++) {
            A[row * PB_GS_NJ + col] -= Q[row * PB_GS_NJ + k] * R[k * PB_GS_NJ + col];
        }
    }
}
