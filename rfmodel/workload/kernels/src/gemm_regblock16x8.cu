// rfmodel: description = Register-blocked SGEMM without shared memory: every thread keeps a fully unrolled 16x8 block of C accumulators and reads a 16-element column of A and an 8-element row of B from global memory per k step (M a multiple of 16 x 16, N of 8 x 16).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 64
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-sensitive

#include "gemm_block.cuh"

extern "C" __global__ void __launch_bounds__(256)
gemm_regblock16x8(int M, int N, int K, float alpha, const float* __restrict__ A,
                  const float* __restrict__ B, float beta, float* __restrict__ C)
{
    const int tx = threadIdx.x % 16;
    const int ty = threadIdx.x / 16;
    const int row0 = (blockIdx.y * 16 + ty) * 16;
    const int col0 = (blockIdx.x * 16 + tx) * 8;
    float acc[16][8] = {};
    for (int k = 0; k < K; ++k) {
        float a[16];
        float b[8];
#pragma unroll
        for (int i = 0; i < 16; ++i)
            a[i] = A[(size_t)(row0 + i) * K + k];
        const float4 b0 = *reinterpret_cast<const float4*>(B + (size_t)k * N + col0);
        const float4 b1 = *reinterpret_cast<const float4*>(B + (size_t)k * N + col0 + 4);
        b[0] = b0.x; b[1] = b0.y; b[2] = b0.z; b[3] = b0.w;
        b[4] = b1.x; b[5] = b1.y; b[6] = b1.z; b[7] = b1.w;
        gemm_block_fma(acc, a, b);
    }
#pragma unroll
    for (int i = 0; i < 16; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            float* c = C + (size_t)(row0 + i) * N + col0 + j;
            *c = alpha * acc[i][j] + beta * *c;
        }
}
