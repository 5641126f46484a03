// rfmodel: description = CUDA SDK mergeSort, upper levels: each 128-thread CTA merges one elementary interval pair (at most 128 keys of each of two sorted runs, bounded by sample limits computed before) in shared memory, every element finding its output slot by a binary search in the other interval.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 32768
// rfmodel: trip = 1
// rfmodel: category = integer-heavy, irregular, memory-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK mergeSort
// rfmodel: original = cuda-samples Samples/0_Introduction/mergeSort/mergeSort.cu: mergeElementaryIntervalsKernel<1> (ascending, 128 threads, N = 4M keys: 32768 CTAs at every merge stage)
// rfmodel: papers = cerf
// rfmodel: original_regs = 18
// rfmodel: original_shared = 2072
// rfmodel: original_threads_per_cta = 128

#include "sdk_mergesort.cuh"

// elements between two samples of a sorted run: the most an elementary interval holds, and the CTA size
#define SDK_MSM_SAMPLE 128U

// Merges the sorted intervals a (len_a pairs) and b (len_b pairs) into out (len_a + len_b pairs); out may be
// the storage of a and b: every thread reads its elements and ranks them before the barrier, then writes.
// Ties: a's elements go first.
__device__ __forceinline__ void sdk_msm_merge(unsigned int* out_key, unsigned int* out_val, const unsigned int* a_key,
                                              const unsigned int* a_val, const unsigned int* b_key,
                                              const unsigned int* b_val, unsigned int len_a, unsigned int len_b)
{
    unsigned int ka, va, kb, vb, slot_a, slot_b;
    if (threadIdx.x < len_a) {
        ka = a_key[threadIdx.x];
        va = a_val[threadIdx.x];
        slot_a = sdk_ms_rank<false>(ka, b_key, len_b, SDK_MSM_SAMPLE) + threadIdx.x;
    }
    if (threadIdx.x < len_b) {
        kb = b_key[threadIdx.x];
        vb = b_val[threadIdx.x];
        slot_b = sdk_ms_rank<true>(kb, a_key, len_a, SDK_MSM_SAMPLE) + threadIdx.x;
    }
    __syncthreads();
    if (threadIdx.x < len_a) {
        out_key[slot_a] = ka;
        out_val[slot_a] = va;
    }
    if (threadIdx.x < len_b) {
        out_key[slot_b] = kb;
        out_val[slot_b] = vb;
    }
}

// One merge stage: src holds sorted runs of `run` pairs (n in all); pairs of runs are merged into dst.
// limits_a[c] / limits_b[c] are where CTA c's intervals start in the segment's first / second run (the
// sample ranks of both runs merged); the last interval of a segment ends at the runs' ends.
extern "C" __global__ void sdk_mergesort_merge(unsigned int* dst_key, unsigned int* dst_val, unsigned int* src_key,
                                               unsigned int* src_val, unsigned int* limits_a, unsigned int* limits_b,
                                               unsigned int run, unsigned int n)
{
    __shared__ unsigned int keys[2 * SDK_MSM_SAMPLE];
    __shared__ unsigned int vals[2 * SDK_MSM_SAMPLE];
    __shared__ unsigned int from_a, from_b, len_a, len_b, to_a, to_b;

    // this CTA's interval within its segment (a pair of runs), and where the segment starts
    const unsigned int k = blockIdx.x & ((2 * run) / SDK_MSM_SAMPLE - 1);
    const unsigned int base = (blockIdx.x - k) * SDK_MSM_SAMPLE;
    src_key += base;
    src_val += base;
    dst_key += base;
    dst_val += base;

    if (threadIdx.x == 0) {
        const unsigned int run_a = run;
        const unsigned int run_b = umin(run, n - base - run);
        const unsigned int samples = (run_a + SDK_MSM_SAMPLE - 1) / SDK_MSM_SAMPLE
                                     + (run_b + SDK_MSM_SAMPLE - 1) / SDK_MSM_SAMPLE;
        from_a = limits_a[blockIdx.x];
        from_b = limits_b[blockIdx.x];
        const bool last = k + 1 >= samples;
        const unsigned int end_a = last ? run_a : limits_a[blockIdx.x + 1];
        const unsigned int end_b = last ? run_b : limits_b[blockIdx.x + 1];
        len_a = end_a - from_a;
        len_b = end_b - from_b;
        to_a = from_a + from_b;
        to_b = to_a + len_a;
    }
    __syncthreads();

    if (threadIdx.x < len_a) {
        keys[threadIdx.x] = src_key[from_a + threadIdx.x];
        vals[threadIdx.x] = src_val[from_a + threadIdx.x];
    }
    if (threadIdx.x < len_b) {
        keys[SDK_MSM_SAMPLE + threadIdx.x] = src_key[run + from_b + threadIdx.x];
        vals[SDK_MSM_SAMPLE + threadIdx.x] = src_val[run + from_b + threadIdx.x];
    }
    __syncthreads();
    sdk_msm_merge(keys, vals, keys, vals, keys + SDK_MSM_SAMPLE, vals + SDK_MSM_SAMPLE, len_a, len_b);
    __syncthreads();

    if (threadIdx.x < len_a) {
        dst_key[to_a + threadIdx.x] = keys[threadIdx.x];
        dst_val[to_a + threadIdx.x] = vals[threadIdx.x];
    }
    if (threadIdx.x < len_b) {
        dst_key[to_b + threadIdx.x] = keys[len_a + threadIdx.x];
        dst_val[to_b + threadIdx.x] = vals[len_a + threadIdx.x];
    }
}
