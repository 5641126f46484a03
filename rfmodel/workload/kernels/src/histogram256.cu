// rfmodel: description = 256-bin byte histogram: each thread reads packed 32-bit words and bumps four shared-memory bins with atomics; CTAs then merge into the global histogram with global atomics.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 120
// rfmodel: trip = 32
// rfmodel: category = memory-bound, integer-heavy, irregular, register-insensitive

#define NBINS 256

extern "C" __global__ void __launch_bounds__(256)
histogram256(int nwords, const unsigned int* __restrict__ data, unsigned int* __restrict__ hist)
{
    __shared__ unsigned int local[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        local[b] = 0u;
    __syncthreads();

    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nwords; i += stride) {
        const unsigned int w = data[i];
        atomicAdd(&local[w & 0xffu], 1u);
        atomicAdd(&local[(w >> 8) & 0xffu], 1u);
        atomicAdd(&local[(w >> 16) & 0xffu], 1u);
        atomicAdd(&local[w >> 24], 1u);
    }
    __syncthreads();

    for (int b = threadIdx.x; b < NBINS; b += blockDim.x) {
        const unsigned int c = local[b];
        if (c != 0u)
            atomicAdd(&hist[b], c);
    }
}
