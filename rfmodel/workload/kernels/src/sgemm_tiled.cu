// rfmodel: description = SGEMM C = alpha*A*B + beta*C (row-major) with 64x64 shared-memory tiles, BK = 16, and a 4x4 register block per thread.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 32
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-insensitive

#include "gemm_block.cuh"

#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4

extern "C" __global__ void __launch_bounds__(256)
sgemm_tiled(int M, int N, int K, float alpha, const float* __restrict__ A,
            const float* __restrict__ B, float beta, float* __restrict__ C)
{
    // A is stored transposed in shared memory so a thread reads its TM rows contiguously.
    __shared__ float As[BK][BM + 4];
    __shared__ float Bs[BK][BN];

    const int tx = threadIdx.x % 16;
    const int ty = threadIdx.x / 16;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};

    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int l = threadIdx.x; l < BM * BK; l += 256) {
            const int m = l / BK, k = l % BK;
            const int gr = row0 + m, gk = k0 + k;
            As[k][m] = (gr < M && gk < K) ? A[(size_t)gr * K + gk] : 0.0f;
        }
        for (int l = threadIdx.x; l < BK * BN; l += 256) {
            const int k = l / BN, n = l % BN;
            const int gk = k0 + k, gc = col0 + n;
            Bs[k][n] = (gk < K && gc < N) ? B[(size_t)gk * N + gc] : 0.0f;
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i)
                a[i] = As[k][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j)
                b[j] = Bs[k][tx + 16 * j];
            gemm_block_fma(acc, a, b);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + tx + 16 * j;
            if (r < M && c < N) {
                const size_t o = (size_t)r * N + c;
                C[o] = alpha * acc[i][j] + beta * C[o];
            }
        }
    }
}
