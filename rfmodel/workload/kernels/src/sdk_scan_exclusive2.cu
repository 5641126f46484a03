// rfmodel: description = CUDA SDK scan, second pass: each thread rebuilds one 1024-element segment's total from the first pass's last output plus its last input, and a shared-memory doubling scan over `size` segments gives each segment's exclusive offset; threads past the end neither load nor store.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 26
// rfmodel: trip = 8
// rfmodel: category = integer-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK scan
// rfmodel: original = cuda-samples Samples/2_Concepts_and_Techniques/scan/scan.cu: scanExclusiveShared2 (256 threads, 6656 segment totals of the 2^18-element arrays: 26 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 12
// rfmodel: original_shared = 2048
// rfmodel: original_threads_per_cta = 256

#include "sdk_scan.cuh"

// Segments are 4 * SDK_SCAN_THREADS elements (the first pass's CTA); `segments` of them in all, scanned in
// groups of `size` (a power of two, at most SDK_SCAN_THREADS).
extern "C" __global__ void sdk_scan_exclusive2(unsigned int* offsets, unsigned int* first_pass, unsigned int* src,
                                               unsigned int segments, unsigned int size)
{
    __shared__ unsigned int buf[2 * SDK_SCAN_THREADS];
    const unsigned int seg = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned int last = 4 * SDK_SCAN_THREADS * seg + 4 * SDK_SCAN_THREADS - 1;
    unsigned int total = 0;
    if (seg < segments)
        total = first_pass[last] + src[last];
    const unsigned int off = sdk_scan_inclusive(total, buf, size) - total;
    if (seg < segments)
        offsets[seg] = off;
}
