// rfmodel: description = CSR sparse matrix-vector product y = A*x, one warp per row (vector kernel): lanes stride through the row's nonzeros, gather x by column index, and combine with shuffles.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 240
// rfmodel: trip = 4
// rfmodel: category = memory-bound, irregular, cache-sensitive, register-insensitive

extern "C" __global__ void __launch_bounds__(128)
spmv_csr(int rows, const int* __restrict__ rowptr, const int* __restrict__ cols,
         const float* __restrict__ vals, const float* __restrict__ x, float* __restrict__ y)
{
    const int lane = threadIdx.x & 31;
    const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int nwarps = (gridDim.x * blockDim.x) >> 5;

    for (int r = warp; r < rows; r += nwarps) {
        const int beg = rowptr[r];
        const int end = rowptr[r + 1];
        float s = 0.0f;
        for (int j = beg + lane; j < end; j += 32)
            s = fmaf(vals[j], __ldg(&x[cols[j]]), s);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_down_sync(0xffffffffu, s, off);
        if (lane == 0)
            y[r] = s;
    }
}
