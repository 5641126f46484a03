// rfmodel: description = Black-Scholes European call and put pricing over a grid-stride loop: logf, expf and sqrtf per option plus a polynomial normal CDF; the IEEE divisions go through the division slow-path subroutine.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 480
// rfmodel: trip = 8
// rfmodel: category = compute-bound, fp-heavy, register-insensitive, cache-insensitive

__device__ __forceinline__ float normal_cdf(float d)
{
    const float a1 = 0.31938153f;
    const float a2 = -0.356563782f;
    const float a3 = 1.781477937f;
    const float a4 = -1.821255978f;
    const float a5 = 1.330274429f;
    const float inv_sqrt_2pi = 0.39894228040143267794f;

    const float k = 1.0f / (1.0f + 0.2316419f * fabsf(d));
    const float poly = k * (a1 + k * (a2 + k * (a3 + k * (a4 + k * a5))));
    const float c = inv_sqrt_2pi * expf(-0.5f * d * d) * poly;
    return (d > 0.0f) ? 1.0f - c : c;
}

extern "C" __global__ void __launch_bounds__(128)
black_scholes(int n, const float* __restrict__ spot, const float* __restrict__ strike,
              const float* __restrict__ years, float rate, float vol,
              float* __restrict__ call, float* __restrict__ put)
{
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float s = spot[i];
        const float x = strike[i];
        const float t = years[i];
        const float sqrt_t = sqrtf(t);
        const float d1 = (logf(s / x) + (rate + 0.5f * vol * vol) * t) / (vol * sqrt_t);
        const float d2 = d1 - vol * sqrt_t;
        const float nd1 = normal_cdf(d1);
        const float nd2 = normal_cdf(d2);
        const float disc = expf(-rate * t);
        call[i] = s * nd1 - x * disc * nd2;
        put[i] = x * disc * (1.0f - nd2) - s * (1.0f - nd1);
    }
}
