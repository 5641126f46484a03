// rfmodel: description = Parboil sgemm (C = alpha*A*B^T + beta*C, column-major): a CTA of 16x8 threads computes a 128x16 tile of C, each thread one row of it held in 16 accumulator registers; per step of 8 along k the CTA stages an 8x16 tile of B^T in shared memory and each thread streams one element of A per row of that tile.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 528
// rfmodel: trip = 124
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Parboil sgemm
// rfmodel: original = Parboil benchmarks/sgemm/src/cuda/sgemm_kernel.cu: mysgemmNT (16x8 threads, grid (m/128, n/16); medium dataset m=1024, n=1056, k=992)
// rfmodel: papers = corf
// rfmodel: original_regs = 44
// rfmodel: original_shared = 512
// rfmodel: original_threads_per_cta = 128

// The register tile: each thread accumulates PA_SG_TN columns of one row of C; the CTA covers
// PA_SG_TH steps of k per pass, one row of the staged B^T tile per thread row.
#define PA_SG_TN 16
#define PA_SG_TH 8
#define PA_SG_TM (PA_SG_TN * PA_SG_TH)

// A is m x k column-major (leading dimension lda), Bt holds B transposed: n x k column-major (ldb),
// C is m x n column-major (ldc). m must be a multiple of 128, n of 16 and k of 8, as the original requires.
extern "C" __global__ void pa_sgemm(const float* A, int lda, const float* Bt, int ldb, float* C, int ldc, int k,
                                    float alpha, float beta)
{
    __shared__ float tileB[PA_SG_TH][PA_SG_TN];
    float acc[PA_SG_TN];
#pragma unroll
    for (int q = 0; q < PA_SG_TN; ++q)
        acc[q] = 0.0f;

    const int flat = threadIdx.y * blockDim.x + threadIdx.x;   // this thread's place in the CTA
    const int row = blockIdx.x * PA_SG_TM + flat;               // its row of A and C
    const int col = blockIdx.y * PA_SG_TN + threadIdx.x;        // the column of C whose B^T row it stages

    for (int kb = 0; kb < k; kb += PA_SG_TH) {
        tileB[threadIdx.y][threadIdx.x] = Bt[col + (kb + threadIdx.y) * ldb];
        __syncthreads();
        for (int s = 0; s < PA_SG_TH; ++s) {
            const float av = A[row + (kb + s) * lda];
            for (int q = 0; q < PA_SG_TN; ++q)
                acc[q] += av * tileB[s][q];
        }
        __syncthreads();
    }

    const int base = blockIdx.y * PA_SG_TN * ldc + row;
    for (int q = 0; q < PA_SG_TN; ++q)
        C[base + q * ldc] = C[base + q * ldc] * beta + alpha * acc[q];
}
