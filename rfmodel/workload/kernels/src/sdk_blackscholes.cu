// rfmodel: description = CUDA SDK BlackScholes: European call and put prices of two options per thread (float2 loads and stores), with the fast intrinsics __logf, __expf, __fdividef and rsqrtf and a polynomial normal CDF.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 15625
// rfmodel: trip = 1
// rfmodel: category = compute-bound, fp-heavy, register-insensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK BlackScholes
// rfmodel: original = cuda-samples Samples/5_Domain_Specific/BlackScholes/BlackScholes_kernel.cuh: BlackScholesGPU (128 threads, 4M options, 2 per thread)
// rfmodel: papers = corf, stt
// rfmodel: original_regs = 26
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 128

// Abramowitz-Stegun style polynomial for the cumulative normal distribution, evaluated with the fast
// intrinsics (approximate reciprocal and exponential).
__device__ __forceinline__ float sdk_bs_cnd(float d)
{
    const float c1 = 0.31938153f, c2 = -0.356563782f, c3 = 1.781477937f;
    const float c4 = -1.821255978f, c5 = 1.330274429f;
    const float inv_sqrt_2pi = 0.39894228040143267794f;
    const float k = __fdividef(1.0f, 1.0f + 0.2316419f * fabsf(d));
    const float tail = inv_sqrt_2pi * __expf(-0.5f * d * d) * (k * (c1 + k * (c2 + k * (c3 + k * (c4 + k * c5)))));
    return d > 0 ? 1.0f - tail : tail;
}

// One option: spot s, strike x, years t, riskless rate r, volatility v.
__device__ __forceinline__ void sdk_bs_price(float& call, float& put, float s, float x, float t, float r, float v)
{
    const float root_t = __fdividef(1.0f, rsqrtf(t));
    const float d1 = __fdividef(__logf(s / x) + (r + 0.5f * v * v) * t, v * root_t);
    const float d2 = d1 - v * root_t;
    const float n1 = sdk_bs_cnd(d1);
    const float n2 = sdk_bs_cnd(d2);
    const float disc = __expf(-r * t);
    call = s * n1 - x * disc * n2;
    put = x * disc * (1.0f - n2) - s * (1.0f - n1);
}

// Thread i prices options 2i and 2i+1 (the .x and .y halves of the float2 at i), for ILP.
extern "C" __global__ void __launch_bounds__(128)
sdk_blackscholes(float2* __restrict__ call, float2* __restrict__ put, float2* __restrict__ spot,
                 float2* __restrict__ strike, float2* __restrict__ years, float rate, float vol, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n / 2) {
        float c0, c1, p0, p1;
        sdk_bs_price(c0, p0, spot[i].x, strike[i].x, years[i].x, rate, vol);
        sdk_bs_price(c1, p1, spot[i].y, strike[i].y, years[i].y, rate, vol);
        call[i] = make_float2(c0, c1);
        put[i] = make_float2(p0, p1);
    }
}
