// rfmodel: description = BiCG sub-kernel pair of the PolyBench kind without shared memory: every thread walks one row of A for q = A*p (32 rows per warp, one cache line per lane, each line re-read over 32 steps of a loop kept rolled), then its CTA's rows column-wise for a per-CTA partial of s = A^T*r.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 60
// rfmodel: trip = 288
// rfmodel: category = memory-bound, cache-sensitive, register-insensitive, fp-heavy

// A is rows x cols, row-major; rows = gridDim.x * blockDim.x (one row per thread).
// q[row] = sum_j A[row][j] * p[j]: the lanes of a warp read 32 different rows, so a load
// touches 32 lines and each line serves the next 31 steps only if it survives in the L1D.
// s_part[blockIdx.x][c] = sum over the CTA's rows i of A[i][c] * r[i]: coalesced, streaming.
extern "C" __global__ void __launch_bounds__(128)
bicg_like(int rows, int cols, const float* __restrict__ A, const float* __restrict__ p,
          const float* __restrict__ r, float* __restrict__ q, float* __restrict__ s_part)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows) {
        const float* a = A + (size_t)row * cols;
        float acc = 0.0f;
        // kept rolled: each step a lane touches its line once and comes back to it on the next
        // step, after the other resident warps' lines have passed through the L1D (unrolled by 16,
        // the 16 loads of one step would share the line and hide the reuse distance)
#pragma unroll 1
        for (int j = 0; j < cols; ++j)
            acc = fmaf(a[j], p[j], acc);
        q[row] = acc;
    }
    const int row0 = blockIdx.x * blockDim.x;
    const int nrows = min((int)blockDim.x, rows - row0);
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float acc = 0.0f;
        for (int i = 0; i < nrows; ++i)
            acc = fmaf(A[(size_t)(row0 + i) * cols + c], r[row0 + i], acc);
        s_part[(size_t)blockIdx.x * cols + c] = acc;
    }
}
