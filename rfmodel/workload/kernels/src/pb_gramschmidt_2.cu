// rfmodel: description = PolyBench gramschmidt, step 2 of column k: Q[:,k] = A[:,k] / R[k][k], one thread per row (a strided column access, one IEEE division each).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 8
// rfmodel: trip = 1
// rfmodel: category = memory-bound, cache-insensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC gramschmidt
// rfmodel: original = PolyBench-ACC CUDA/linear-algebra/solvers/gramschmidt/gramschmidt.cu: gramschmidt_kernel2 (256x1 threads, standard dataset NI = NJ = 2048)
// rfmodel: papers = cerf
// rfmodel: original_regs = 15
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of A, R and Q: the standard dataset's, fixed at compile time as in the original.
#define PB_GS_NJ 2048

// Thread i normalises element i of column k (no loop: one division per thread).
extern "C" __global__ void pb_gramschmidt_2(int ni, int nj, float* A, float* R, float* Q, int k)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < ni) {
        Q[row * PB_GS_NJ + k] = A[row * PB_GS_NJ + k] / R[k * PB_GS_NJ + k];
    }
}
