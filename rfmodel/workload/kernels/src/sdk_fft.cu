// rfmodel: description = CUDA SDK fft (the transform the SDK's FFT samples hand to cuFFT), a batched forward complex FFT of 512-point float2 signals: one 64-thread CTA per signal; each thread loads 8 points at a stride of 64 and runs three radix-8 Stockham passes (twiddles from __sincosf, the 8-point DFT as three butterfly levels in registers), the points exchanged through padded shared memory between barriers.
// rfmodel: threads_per_cta = 64
// rfmodel: ctas = 2048
// rfmodel: trip = 1
// rfmodel: category = fp-heavy, compute-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK fft (CERF's "fft"; the SDK's FFT samples call cuFFT for the transform)
// rfmodel: original = none (the cuda-samples FFT samples, convolutionFFT2D, simpleCUFFT with its _2d_MGPU, _MGPU and _callback variants, and oceanFFT, call cufftExecC2C/R2C/C2R for the transform, and their own kernels only pad, multiply spectra pointwise or pre- and post-process real transforms: no kernel of the samples computes a transform; written as a batched shared-memory C2C transform of the kind cuFFT runs for small sizes, one 512-point signal per 64-thread CTA, a batch of 2048 signals)
// rfmodel: papers = cerf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 4608
// rfmodel: original_threads_per_cta = 64

#define SDK_FFT_N 512
#define SDK_FFT_R 8
#define SDK_FFT_T (SDK_FFT_N / SDK_FFT_R)
// one pad word after every 8: the passes' strided shared-memory writes fall in distinct banks
#define SDK_FFT_PAD(i) ((i) + ((i) >> 3))
#define SDK_FFT_SMEM SDK_FFT_PAD(SDK_FFT_N)
#define SDK_FFT_RSQRT2 0.7071067811865475f
#define SDK_FFT_TWO_PI 6.283185307179586f

// z * (-i)
__device__ __forceinline__ float2 sdk_fft_mul_mi(float2 z)
{
    return make_float2(z.y, -z.x);
}

// z * exp(-i pi / 4) = z * (1 - i) / sqrt(2)
__device__ __forceinline__ float2 sdk_fft_mul_w1(float2 z)
{
    return make_float2((z.x + z.y) * SDK_FFT_RSQRT2, (z.y - z.x) * SDK_FFT_RSQRT2);
}

// z * exp(-3 i pi / 4) = z * (-1 - i) / sqrt(2)
__device__ __forceinline__ float2 sdk_fft_mul_w3(float2 z)
{
    return make_float2((z.y - z.x) * SDK_FFT_RSQRT2, -(z.x + z.y) * SDK_FFT_RSQRT2);
}

__device__ __forceinline__ float2 sdk_fft_add(float2 a, float2 b)
{
    return make_float2(a.x + b.x, a.y + b.y);
}

__device__ __forceinline__ float2 sdk_fft_sub(float2 a, float2 b)
{
    return make_float2(a.x - b.x, a.y - b.y);
}

// In place: the 4-point DFT of p0..p3 (natural order in and out).
__device__ __forceinline__ void sdk_fft_dft4(float2& p0, float2& p1, float2& p2, float2& p3)
{
    const float2 s0 = sdk_fft_add(p0, p2), s1 = sdk_fft_add(p1, p3);
    const float2 t0 = sdk_fft_sub(p0, p2), t1 = sdk_fft_mul_mi(sdk_fft_sub(p1, p3));
    p0 = sdk_fft_add(s0, s1);
    p1 = sdk_fft_add(t0, t1);
    p2 = sdk_fft_sub(s0, s1);
    p3 = sdk_fft_sub(t0, t1);
}

// In place: the forward 8-point DFT of v[0..7], X[k] = sum_n v[n] exp(-2 pi i n k / 8), natural order in
// and out. Decimation in frequency: the halves' sums give the even outputs, their differences turned by
// exp(-2 pi i n / 8) the odd ones, each by a 4-point DFT.
__device__ __forceinline__ void sdk_fft_dft8(float2* v)
{
    float2 a0 = sdk_fft_add(v[0], v[4]), a1 = sdk_fft_add(v[1], v[5]);
    float2 a2 = sdk_fft_add(v[2], v[6]), a3 = sdk_fft_add(v[3], v[7]);
    float2 b0 = sdk_fft_sub(v[0], v[4]);
    float2 b1 = sdk_fft_mul_w1(sdk_fft_sub(v[1], v[5]));
    float2 b2 = sdk_fft_mul_mi(sdk_fft_sub(v[2], v[6]));
    float2 b3 = sdk_fft_mul_w3(sdk_fft_sub(v[3], v[7]));
    sdk_fft_dft4(a0, a1, a2, a3);
    sdk_fft_dft4(b0, b1, b2, b3);
    v[0] = a0;
    v[1] = b0;
    v[2] = a1;
    v[3] = b1;
    v[4] = a2;
    v[5] = b2;
    v[6] = a3;
    v[7] = b3;
}

// Point r (r = 1..7) of a butterfly times exp(i r angle).
__device__ __forceinline__ void sdk_fft_twiddle(float2* v, float angle)
{
#pragma unroll
    for (int r = 1; r < SDK_FFT_R; r++) {
        float s, c;
        __sincosf(angle * (float)r, &s, &c);
        v[r] = make_float2(v[r].x * c - v[r].y * s, v[r].x * s + v[r].y * c);
    }
}

// Point r of a butterfly to position first + r * stride of the exchange buffers.
__device__ __forceinline__ void sdk_fft_put(float* re, float* im, const float2* v, int first, int stride)
{
#pragma unroll
    for (int r = 0; r < SDK_FFT_R; r++) {
        const int at = SDK_FFT_PAD(first + r * stride);
        re[at] = v[r].x;
        im[at] = v[r].y;
    }
}

// Points j, j + 64, ..., j + 448 of the exchange buffers.
__device__ __forceinline__ void sdk_fft_get(const float* re, const float* im, float2* v, int j)
{
#pragma unroll
    for (int r = 0; r < SDK_FFT_R; r++) {
        const int at = SDK_FFT_PAD(j + r * SDK_FFT_T);
        v[r] = make_float2(re[at], im[at]);
    }
}

// Stockham radix-8 passes over sub-transforms of Ns = 1, 8, 64 points: butterfly j reads points j + 64 r,
// turns them by its twiddles exp(-2 pi i r (j mod Ns) / (8 Ns)), transforms them and writes point r to
// (j / Ns) * 8 Ns + (j mod Ns) + r Ns. The first pass reads the signal, the last writes the spectrum
// (positions j + 64 r: both coalesced); shared memory carries the two exchanges between them.
extern "C" __global__ void sdk_fft(float2* __restrict__ dst, const float2* __restrict__ src)
{
    __shared__ float re[SDK_FFT_SMEM], im[SDK_FFT_SMEM];
    const int j = threadIdx.x;
    const float2* in = src + blockIdx.x * SDK_FFT_N + j;
    float2* out = dst + blockIdx.x * SDK_FFT_N + j;
    float2 v[SDK_FFT_R];

    // Ns = 1: no twiddles
#pragma unroll
    for (int r = 0; r < SDK_FFT_R; r++)
        v[r] = in[r * SDK_FFT_T];
    sdk_fft_dft8(v);
    sdk_fft_put(re, im, v, j * SDK_FFT_R, 1);
    __syncthreads();

    // Ns = 8
    sdk_fft_get(re, im, v, j);
    sdk_fft_twiddle(v, (-SDK_FFT_TWO_PI / 64.0f) * (float)(j & 7));
    sdk_fft_dft8(v);
    __syncthreads();  // every butterfly has read its points before any is overwritten
    sdk_fft_put(re, im, v, (j >> 3) * 64 + (j & 7), 8);
    __syncthreads();

    // Ns = 64
    sdk_fft_get(re, im, v, j);
    sdk_fft_twiddle(v, (-SDK_FFT_TWO_PI / 512.0f) * (float)j);
    sdk_fft_dft8(v);
#pragma unroll
    for (int r = 0; r < SDK_FFT_R; r++)
        out[r * SDK_FFT_T] = v[r];
}
