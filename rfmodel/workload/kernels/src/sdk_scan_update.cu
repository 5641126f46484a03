// rfmodel: description = CUDA SDK scan, last pass: thread 0 of each 256-thread CTA fetches its segment's offset into shared memory, and after a barrier every thread adds it to its uint4 of the first pass's output.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 6656
// rfmodel: trip = 1
// rfmodel: category = integer-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK scan
// rfmodel: original = cuda-samples Samples/2_Concepts_and_Techniques/scan/scan.cu: uniformUpdate (256 threads, N = 13*2^20/2 uints: 6656 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 14
// rfmodel: original_shared = 4
// rfmodel: original_threads_per_cta = 256

// data holds one segment of 1024 elements (256 uint4) per CTA; offsets one value per segment.
extern "C" __global__ void sdk_scan_update(uint4* data, unsigned int* offsets)
{
    __shared__ unsigned int off;
    const unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0)
        off = offsets[blockIdx.x];
    __syncthreads();
    uint4 v = data[i];
    v.x += off;
    v.y += off;
    v.z += off;
    v.w += off;
    data[i] = v;
}
