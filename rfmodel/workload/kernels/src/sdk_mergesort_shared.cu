// rfmodel: description = CUDA SDK mergeSort, bottom level: a 512-thread CTA sorts 1024 key/value pairs in shared memory by log2(1024) merge rounds; in each round every thread takes one element of each of two sorted runs and finds its output slot by a binary search in the other run.
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 4096
// rfmodel: trip = 10
// rfmodel: category = integer-heavy, irregular, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK mergeSort
// rfmodel: original = cuda-samples Samples/0_Introduction/mergeSort/mergeSort.cu: mergeSortSharedKernel<1> (ascending, 512 threads, N = 4M keys: 4096 CTAs of 1024)
// rfmodel: papers = cerf
// rfmodel: original_regs = 17
// rfmodel: original_shared = 8192
// rfmodel: original_threads_per_cta = 512

#include "sdk_mergesort.cuh"

#define SDK_MS_TILE 1024U

// Sorts each tile of `length` (a power of two, at most SDK_MS_TILE) pairs, ascending by key; equal keys keep
// their order (ties: the left run's element goes first).
extern "C" __global__ void sdk_mergesort_shared(unsigned int* dst_key, unsigned int* dst_val, unsigned int* src_key,
                                                unsigned int* src_val, unsigned int length)
{
    __shared__ unsigned int keys[SDK_MS_TILE];
    __shared__ unsigned int vals[SDK_MS_TILE];
    // this thread's first element of the tile; its second is half a tile further on
    const unsigned int at = blockIdx.x * SDK_MS_TILE + threadIdx.x;
    src_key += at;
    src_val += at;
    dst_key += at;
    dst_val += at;
    keys[threadIdx.x] = src_key[0];
    vals[threadIdx.x] = src_val[0];
    keys[threadIdx.x + SDK_MS_TILE / 2] = src_key[SDK_MS_TILE / 2];
    vals[threadIdx.x + SDK_MS_TILE / 2] = src_val[SDK_MS_TILE / 2];

    // round r merges pairs of sorted runs of `run` elements; thread t handles element t % run of both
    for (unsigned int run = 1; run < length; run <<= 1) {
        const unsigned int i = threadIdx.x & (run - 1);
        unsigned int* pk = keys + 2 * (threadIdx.x - i);
        unsigned int* pv = vals + 2 * (threadIdx.x - i);
        __syncthreads();
        const unsigned int ka = pk[i], va = pv[i];
        const unsigned int kb = pk[i + run], vb = pv[i + run];
        const unsigned int slot_a = sdk_ms_rank<false>(ka, pk + run, run, run) + i;
        const unsigned int slot_b = sdk_ms_rank<true>(kb, pk, run, run) + i;
        __syncthreads();
        pk[slot_a] = ka;
        pv[slot_a] = va;
        pk[slot_b] = kb;
        pv[slot_b] = vb;
    }
    __syncthreads();
    dst_key[0] = keys[threadIdx.x];
    dst_val[0] = vals[threadIdx.x];
    dst_key[SDK_MS_TILE / 2] = keys[threadIdx.x + SDK_MS_TILE / 2];
    dst_val[SDK_MS_TILE / 2] = vals[threadIdx.x + SDK_MS_TILE / 2];
}
