// rfmodel: description = One radix-16 pass of a complex FFT: every thread loads 16 complex points with a stride, multiplies by its twiddles (sincosf), runs the 16-point DFT as four fully unrolled radix-2 stages in registers and stores the results.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 8
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-insensitive

extern "C" __global__ void __launch_bounds__(256)
fft_radix16(int n, int stride, const float2* __restrict__ in, float2* __restrict__ out)
{
    const int groups = n / 16;
    for (int g = blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += gridDim.x * blockDim.x) {
        const int base = (g / stride) * stride * 16 + (g % stride);
        float re[16], im[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            const float2 v = in[base + i * stride];
            float s, c;
            __sincosf(-6.2831853f * (float)((g % stride) * i) / (float)(stride * 16), &s, &c);
            re[i] = v.x * c - v.y * s;
            im[i] = v.x * s + v.y * c;
        }
#pragma unroll
        for (int half = 8; half >= 1; half /= 2) {
#pragma unroll
            for (int i = 0; i < 16; ++i) {
                if ((i & half) == 0) {
                    const int j = i + half;
                    const float ang = -6.2831853f * (float)((i % half) * (8 / half)) / 16.0f;
                    const float wc = __cosf(ang), ws = __sinf(ang);
                    const float tr = re[j] * wc - im[j] * ws;
                    const float ti = re[j] * ws + im[j] * wc;
                    re[j] = re[i] - tr;
                    im[j] = im[i] - ti;
                    re[i] = re[i] + tr;
                    im[i] = im[i] + ti;
                }
            }
        }
#pragma unroll
        for (int i = 0; i < 16; ++i)
            out[base + i * stride] = make_float2(re[i], im[i]);
    }
}
