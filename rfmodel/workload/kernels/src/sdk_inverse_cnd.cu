// rfmodel: description = CUDA SDK quasirandomGenerator, second kernel: Moro's inverse of the normal CDF applied to evenly spaced 32-bit samples generated on the fly (grid-stride), a rational polynomial in the body and a log-log Chebyshev series in the tails.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 128
// rfmodel: trip = 192
// rfmodel: category = fp-heavy, compute-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK quasirandomGenerator
// rfmodel: original = cuda-samples Samples/5_Domain_Specific/quasirandomGenerator/quasirandomGenerator_kernel.cu: inverseCNDKernel (128 threads, 128 CTAs, 3 * 2^20 samples, no input array: samples generated)
// rfmodel: papers = cerf
// rfmodel: original_regs = 16
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 128

#define SDK_ICND_MUL24(a, b) __umul24((a), (b))

// Moro (1995): the standard normal quantile of the uniform u = (x + 1/2) / (2^32 - 1).
__device__ __forceinline__ float sdk_icnd_moro(unsigned int x)
{
    // body: p * A(p^2) / B(p^2) for |p - 1/2| < 0.42
    const float a0 = 2.50662823884f, a1 = -18.61500062529f, a2 = 41.39119773534f, a3 = -25.44106049637f;
    const float b0 = -8.4735109309f, b1 = 23.08336743743f, b2 = -21.06224101826f, b3 = 3.13082909833f;
    // tails: a series in log(-log u)
    const float t0 = 0.337475482272615f, t1 = 0.976169019091719f, t2 = 0.160797971491821f;
    const float t3 = 2.76438810333863E-02f, t4 = 3.8405729373609E-03f, t5 = 3.951896511919E-04f;
    const float t6 = 3.21767881768E-05f, t7 = 2.888167364E-07f, t8 = 3.960315187E-07f;

    // fold the upper half of the range onto the lower one, and flip the sign at the end
    bool upper = false;
    if (x >= 0x80000000U) {
        x = 0xffffffffU - x;
        upper = true;
    }
    const float scale = 1.0f / (float)0xffffffffU;
    const float u = x * scale + scale / 2.0f; // in (0, 1/2]
    const float p = u - 0.5f;                 // in (-1/2, 0]
    float z;
    if (p > -0.42f) {
        const float q = p * p;
        z = p * (((a3 * q + a2) * q + a1) * q + a0) / ((((b3 * q + b2) * q + b1) * q + b0) * q + 1.0f);
    } else {
        const float w = __logf(-__logf(u));
        z = -(t0 + w * (t1 + w * (t2 + w * (t3 + w * (t4 + w * (t5 + w * (t6 + w * (t7 + w * t8))))))));
    }
    return upper ? -z : z;
}

// out[i] = the quantile of the i-th of n evenly spaced samples ((i + 1) * floor((2^32 - 1) / (n + 1))), or of
// in[i] where an input array is given.
extern "C" __global__ void sdk_inverse_cnd(float* out, unsigned int* in, unsigned int n)
{
    const unsigned int gap = 0xffffffffU / (n + 1);
    const unsigned int first = SDK_ICND_MUL24(blockIdx.x, blockDim.x) + threadIdx.x;
    const unsigned int step = SDK_ICND_MUL24(gridDim.x, blockDim.x);
    if (in != 0) {
        for (unsigned int i = first; i < n; i += step)
            out[i] = sdk_icnd_moro(in[i]);
    } else {
        for (unsigned int i = first; i < n; i += step)
            out[i] = sdk_icnd_moro((i + 1) * gap);
    }
}
