// rfmodel: description = CUDA SDK scan, first pass: exclusive prefix sums of unsigned ints within segments of `size` elements, each of 256 threads loading a uint4, summing it serially, then a shared-memory doubling scan over the threads' totals.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 6656
// rfmodel: trip = 8
// rfmodel: category = integer-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK scan
// rfmodel: original = cuda-samples Samples/2_Concepts_and_Techniques/scan/scan.cu: scanExclusiveShared (256 threads, N = 13*2^20/2 uints, segments of 1024: 6656 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 18
// rfmodel: original_shared = 2048
// rfmodel: original_threads_per_cta = 256

#include "sdk_scan.cuh"

// Exclusive scan of four values per thread (a uint4) within segments of `size` elements (4 .. 1024, a
// power of two; the grid covers the array exactly).
extern "C" __global__ void sdk_scan_exclusive(uint4* dst, uint4* src, unsigned int size)
{
    __shared__ unsigned int buf[2 * SDK_SCAN_THREADS];
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    const uint4 in = src[i];
    // serial inclusive scan of the four, then an exclusive scan of the threads' totals
    uint4 out;
    out.x = in.x;
    out.y = out.x + in.y;
    out.z = out.y + in.z;
    out.w = out.z + in.w;
    const unsigned int base = sdk_scan_inclusive(out.w, buf, size / 4) - out.w;
    // back to exclusive: add the base and drop each element's own value
    out.x = out.x + base - in.x;
    out.y = out.y + base - in.y;
    out.z = out.z + base - in.z;
    out.w = out.w + base - in.w;
    dst[i] = out;
}
