// The register block of the SGEMM kernels: each thread keeps an R x C block of C's accumulators, fully
// unrolled so that every accumulator lives in a register.

// acc += a b^T: the outer product of R elements of a column of A and C elements of a row of B, one FMA per
// accumulator.
template <int R, int C>
__device__ __forceinline__ void gemm_block_fma(float (&acc)[R][C], const float (&a)[R], const float (&b)[C])
{
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < C; ++j)
            acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}
