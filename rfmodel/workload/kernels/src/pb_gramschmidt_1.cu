// rfmodel: description = PolyBench gramschmidt, step 1 of column k: the norm of column k of A, computed serially by thread 0 of a single CTA (the other 255 threads idle), then R[k][k] = sqrt(norm).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 1
// rfmodel: trip = 2048
// rfmodel: category = memory-bound, cache-insensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC gramschmidt
// rfmodel: original = PolyBench-ACC CUDA/linear-algebra/solvers/gramschmidt/gramschmidt.cu: gramschmidt_kernel1 (256x1 threads, one CTA, standard dataset NI = NJ = 2048)
// rfmodel: papers = cerf
// rfmodel: original_regs = 16
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of A, R and Q: the standard dataset's, fixed at compile time as in the original.
#define PB_GS_NJ 2048

// Only the first thread of the grid works: it sums the squares of column k down all ni rows in a register
// and writes the square root (correctly rounded sqrtf) to the diagonal of R.
extern "C" __global__ void pb_gramschmidt_1(int ni, int nj, float* A, float* R, float* Q, int k)
{
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0) {
        float sumsq = 0.0f;
        for (int row = 0; row < ni; row++) {
            sumsq += A[row * PB_GS_NJ + k] * A[row * PB_GS_NJ + k];
        }
        R[k * PB_GS_NJ + k] = sqrtf(sumsq);
    }
}
