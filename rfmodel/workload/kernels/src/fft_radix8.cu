// rfmodel: description = One radix-8 Stockham FFT pass over a batch of complex float2 signals: per butterfly, 8 loads, twiddle powers w^1..w^7 from sincospif, a fully unrolled 8-point DIF butterfly, and 8 strided stores.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 240
// rfmodel: trip = 4
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-sensitive

__device__ __forceinline__ float2 c_add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 c_sub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float2 c_mul(float2 a, float2 b)
{
    return make_float2(fmaf(a.x, b.x, -a.y * b.y), fmaf(a.x, b.y, a.y * b.x));
}
// Multiply by -i.
__device__ __forceinline__ float2 c_mul_mi(float2 a) { return make_float2(a.y, -a.x); }

__device__ __forceinline__ void butterfly2(float2& a, float2& b)
{
    const float2 t = a;
    a = c_add(t, b);
    b = c_sub(t, b);
}

extern "C" __global__ void __launch_bounds__(128)
fft_radix8(int n, int ns, int batches, const float2* __restrict__ in, float2* __restrict__ out)
{
    const float h = 0.70710678118654752440f;
    const int m = n / 8;
    const int total = batches * m;
    const int stride = gridDim.x * blockDim.x;

    for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < total; t += stride) {
        const int batch = t / m;
        const int j = t - batch * m;
        const int k = j % ns;
        const float2* src = in + (size_t)batch * n;
        float2* dst = out + (size_t)batch * n;

        float2 v[8];
#pragma unroll
        for (int r = 0; r < 8; ++r)
            v[r] = src[j + r * m];

        if (ns > 1) {
            float s, c;
            sincospif(-2.0f * (float)k / (float)(ns * 8), &s, &c);
            const float2 w1 = make_float2(c, s);
            float2 w = w1;
#pragma unroll
            for (int r = 1; r < 8; ++r) {
                v[r] = c_mul(v[r], w);
                w = c_mul(w, w1);
            }
        }

        // Stage 1: span 4, twiddles W8^0..W8^3 on the differences.
        butterfly2(v[0], v[4]);
        butterfly2(v[1], v[5]);
        butterfly2(v[2], v[6]);
        butterfly2(v[3], v[7]);
        v[5] = make_float2(h * (v[5].x + v[5].y), h * (v[5].y - v[5].x));
        v[6] = c_mul_mi(v[6]);
        v[7] = make_float2(h * (v[7].y - v[7].x), -h * (v[7].x + v[7].y));
        // Stage 2: span 2, twiddle -i on the second difference of each half.
        butterfly2(v[0], v[2]);
        butterfly2(v[1], v[3]);
        butterfly2(v[4], v[6]);
        butterfly2(v[5], v[7]);
        v[3] = c_mul_mi(v[3]);
        v[7] = c_mul_mi(v[7]);
        // Stage 3: span 1.
        butterfly2(v[0], v[1]);
        butterfly2(v[2], v[3]);
        butterfly2(v[4], v[5]);
        butterfly2(v[6], v[7]);

        // Outputs are in bit-reversed order: v[p] holds X[bitrev3(p)].
        const int base = (j / ns) * ns * 8 + k;
        dst[base + 0 * ns] = v[0];
        dst[base + 1 * ns] = v[4];
        dst[base + 2 * ns] = v[2];
        dst[base + 3 * ns] = v[6];
        dst[base + 4 * ns] = v[1];
        dst[base + 5 * ns] = v[5];
        dst[base + 6 * ns] = v[3];
        dst[base + 7 * ns] = v[7];
    }
}
