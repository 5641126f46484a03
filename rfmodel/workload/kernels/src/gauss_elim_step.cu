// rfmodel: description = One Gaussian-elimination step for pivot k: a 32x8 CTA owns 8 rows at a time; the row multipliers a[i][k]/a[k][k] go through shared memory, then each row is updated a[i][j] -= m*a[k][j] across its columns.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 16
// rfmodel: category = memory-bound, cache-sensitive, register-insensitive, fp-heavy

#define GE_TX 32
#define GE_TY 8

extern "C" __global__ void __launch_bounds__(GE_TX * GE_TY)
gauss_elim_step(int n, int k, float* __restrict__ a, float* __restrict__ b)
{
    __shared__ float mult[GE_TY];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const float* pivot_row = a + (size_t)k * n;

    for (int i0 = k + 1 + blockIdx.x * GE_TY; i0 < n; i0 += gridDim.x * GE_TY) {
        const int i = i0 + ty;
        if (tx == 0)
            mult[ty] = (i < n) ? a[(size_t)i * n + k] / pivot_row[k] : 0.0f;
        __syncthreads();
        const float m = mult[ty];
        if (i < n) {
            float* row = a + (size_t)i * n;
            for (int j = k + tx; j < n; j += GE_TX)
                row[j] = fmaf(-m, pivot_row[j], row[j]);
            if (tx == 0)
                b[i] = fmaf(-m, b[k], b[i]);
        }
        __syncthreads();
    }
}
