// rfmodel: description = Register-blocked SGEMM micro-kernel: 128x128 CTA tile, BK = 8, every thread keeps a fully unrolled 8x8 block of accumulators plus 8+8 operand registers (M, N multiples of 128, K a multiple of 8).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 128
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-insensitive

#include "gemm_block.cuh"

#define GM_BM 128
#define GM_BN 128
#define GM_BK 8

extern "C" __global__ void __launch_bounds__(256)
gemm_micro8x8(int M, int N, int K, float alpha, const float* __restrict__ A,
              const float* __restrict__ B, float beta, float* __restrict__ C)
{
    __shared__ __align__(16) float As[GM_BK][GM_BM];
    __shared__ __align__(16) float Bs[GM_BK][GM_BN];

    const int tid = threadIdx.x;
    const int tx = tid % 16;
    const int ty = tid / 16;
    const int row0 = blockIdx.y * GM_BM;
    const int col0 = blockIdx.x * GM_BN;

    // Global-to-shared copy assignment: one float4 of A and one float4 of B per thread.
    const int a_row = tid / 2;
    const int a_k = (tid % 2) * 4;
    const int b_k = tid / 32;
    const int b_col = (tid % 32) * 4;
    const float* a_ptr = A + (size_t)(row0 + a_row) * K + a_k;
    const float* b_ptr = B + (size_t)b_k * N + col0 + b_col;

    float acc[8][8] = {};

    for (int k0 = 0; k0 < K; k0 += GM_BK) {
        const float4 av = *reinterpret_cast<const float4*>(a_ptr + k0);
        const float4 bv = *reinterpret_cast<const float4*>(b_ptr + (size_t)k0 * N);
        As[a_k + 0][a_row] = av.x;
        As[a_k + 1][a_row] = av.y;
        As[a_k + 2][a_row] = av.z;
        As[a_k + 3][a_row] = av.w;
        *reinterpret_cast<float4*>(&Bs[b_k][b_col]) = bv;
        __syncthreads();

#pragma unroll
        for (int k = 0; k < GM_BK; ++k) {
            const float4 a_lo = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
            const float4 a_hi = *reinterpret_cast<const float4*>(&As[k][64 + ty * 4]);
            const float4 b_lo = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
            const float4 b_hi = *reinterpret_cast<const float4*>(&Bs[k][64 + tx * 4]);
            const float a[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const float b[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
            gemm_block_fma(acc, a, b);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = row0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float4* cp = reinterpret_cast<float4*>(C + (size_t)r * N + col0 + h * 64 + tx * 4);
            float4 c = *cp;
            c.x = alpha * acc[i][4 * h + 0] + beta * c.x;
            c.y = alpha * acc[i][4 * h + 1] + beta * c.y;
            c.z = alpha * acc[i][4 * h + 2] + beta * c.z;
            c.w = alpha * acc[i][4 * h + 3] + beta * c.w;
            *cp = c;
        }
    }
}
