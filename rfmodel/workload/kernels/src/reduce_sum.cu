// rfmodel: description = Sum reduction: grid-stride accumulation (two loads per step), a shared-memory tree down to 64 values with __syncthreads, then warp shuffles; one partial sum per CTA.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 240
// rfmodel: trip = 16
// rfmodel: category = memory-bound, register-insensitive, cache-insensitive

extern "C" __global__ void __launch_bounds__(256)
reduce_sum(int n, const float* __restrict__ in, float* __restrict__ partial)
{
    __shared__ float buf[256];
    const unsigned int tid = threadIdx.x;
    const unsigned int step = 2u * gridDim.x * blockDim.x;

    float s = 0.0f;
    for (unsigned int i = 2u * blockIdx.x * blockDim.x + tid; i < (unsigned int)n; i += step) {
        s += in[i];
        if (i + blockDim.x < (unsigned int)n)
            s += in[i + blockDim.x];
    }
    buf[tid] = s;
    __syncthreads();

    for (unsigned int w = blockDim.x / 2; w > 32; w >>= 1) {
        if (tid < w)
            buf[tid] += buf[tid + w];
        __syncthreads();
    }

    if (tid < 32) {
        s = buf[tid] + buf[tid + 32];
        for (int off = 16; off > 0; off >>= 1)
            s += __shfl_down_sync(0xffffffffu, s, off);
        if (tid == 0)
            partial[blockIdx.x] = s;
    }
}
