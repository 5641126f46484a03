// rfmodel: description = CUDA SDK quasirandomGenerator: a Niederreiter base-2 low-discrepancy sequence in 3 dimensions; the CTA's y index picks the dimension, each thread walks the points grid-stride and XORs the direction numbers (a __constant__ table) selected by the set bits of its point's index.
// rfmodel: threads_per_cta = 384
// rfmodel: ctas = 128
// rfmodel: trip = 64
// rfmodel: category = integer-heavy, compute-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK quasirandomGenerator
// rfmodel: original = cuda-samples Samples/5_Domain_Specific/quasirandomGenerator/quasirandomGenerator_kernel.cu: quasirandomGeneratorKernel (128 x 3 threads, 128 CTAs, N = 2^20 points per dimension)
// rfmodel: papers = cerf
// rfmodel: original_regs = 20
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 384

#define SDK_QRNG_DIMS 3
#define SDK_QRNG_BITS 31

// 24-bit integer products, as the sample uses for its index arithmetic
#define SDK_QRNG_MUL24(a, b) __umul24((a), (b))

// direction numbers: row d holds dimension d's generator columns, one per index bit
__constant__ unsigned int sdk_qrng_dirs[SDK_QRNG_DIMS][SDK_QRNG_BITS];

// out[d * n + i] is point i + offset of dimension d = threadIdx.y, mapped to (0, 1) as (bits + 1) / (2^31 + 1).
extern "C" __global__ void sdk_quasirandom(float* out, unsigned int offset, unsigned int n)
{
    const unsigned int* dirs = sdk_qrng_dirs[threadIdx.y];
    const unsigned int first = SDK_QRNG_MUL24(blockDim.x, blockIdx.x) + threadIdx.x;
    const unsigned int step = SDK_QRNG_MUL24(blockDim.x, gridDim.x);

    for (unsigned int i = first; i < n; i += step) {
        unsigned int bits = 0;
        unsigned int index = offset + i;
        for (int b = 0; b < SDK_QRNG_BITS; b++) {
            if (index & 1)
                bits ^= dirs[b];
            index >>= 1;
        }
        out[SDK_QRNG_MUL24(threadIdx.y, n) + i] = (float)(bits + 1) * (1.0f / (float)0x80000001U);
    }
}
