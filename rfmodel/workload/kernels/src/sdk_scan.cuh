// CUDA SDK scan: the shared-memory scan both scan passes use.

#define SDK_SCAN_THREADS 256

// Inclusive scan of one value per thread over groups of `size` threads (a power of two) by log2(size)
// doubling steps. Each thread owns two slots: a zero below its value, so reading `offset` back never needs
// a bounds test.
__device__ __forceinline__ unsigned int sdk_scan_inclusive(unsigned int v, volatile unsigned int* buf, unsigned int size)
{
    unsigned int slot = 2 * threadIdx.x - (threadIdx.x & (size - 1));
    buf[slot] = 0;
    slot += size;
    buf[slot] = v;
    for (unsigned int offset = 1; offset < size; offset <<= 1) {
        __syncthreads();
        const unsigned int sum = buf[slot] + buf[slot - offset];
        __syncthreads();
        buf[slot] = sum;
    }
    return buf[slot];
}
