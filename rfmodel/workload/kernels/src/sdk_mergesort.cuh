// CUDA SDK mergeSort: the binary search both merge kernels rank an element with.

// How many of run[0 .. len-1] (ascending) are below `key` (strict) or, when `upto`, at most `key` (inclusive),
// by a binary search whose first step is `step` (a power of two, at least len / 2). Merging two runs ranks the
// first run's elements in the second strictly and the second's in the first inclusively: ties keep the first
// run's elements first.
template <bool upto>
__device__ __forceinline__ unsigned int sdk_ms_rank(unsigned int key, const unsigned int* run, unsigned int len,
                                                    unsigned int step)
{
    if (len == 0)
        return 0;
    unsigned int at = 0;
    for (; step > 0; step >>= 1) {
        const unsigned int next = umin(at + step, len);
        if (upto ? run[next - 1] <= key : run[next - 1] < key)
            at = next;
    }
    return at;
}
