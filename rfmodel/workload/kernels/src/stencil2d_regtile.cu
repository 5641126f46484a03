// rfmodel: description = 25-point (radius 2) 2D stencil with register tiling: every thread owns 16 consecutive x positions and marches down y with a five-row sliding window of 20 values per row held in registers, writing 16 outputs per row.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 32
// rfmodel: category = memory-bound, fp-heavy, register-sensitive, cache-sensitive

#define ST_W 16
#define ST_R 2

extern "C" __global__ void __launch_bounds__(256)
stencil2d_regtile(int nx, int ny, const float* __restrict__ in, float* __restrict__ out, const float* __restrict__ w)
{
    const int x0 = (blockIdx.x * blockDim.x + threadIdx.x) * ST_W;
    if (x0 + ST_W + 2 * ST_R > nx) return;
    float coef[5][5];
#pragma unroll
    for (int a = 0; a < 5; ++a)
#pragma unroll
        for (int b = 0; b < 5; ++b)
            coef[a][b] = w[a * 5 + b];
    float win[5][ST_W + 2 * ST_R];
#pragma unroll
    for (int r = 0; r < 4; ++r)
#pragma unroll
        for (int i = 0; i < ST_W + 2 * ST_R; ++i)
            win[r + 1][i] = in[(size_t)r * nx + x0 + i];
    for (int y = ST_R; y < ny - ST_R; ++y) {
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
            for (int i = 0; i < ST_W + 2 * ST_R; ++i)
                win[r][i] = win[r + 1][i];
#pragma unroll
        for (int i = 0; i < ST_W + 2 * ST_R; ++i)
            win[4][i] = in[(size_t)(y + ST_R) * nx + x0 + i];
#pragma unroll
        for (int i = 0; i < ST_W; ++i) {
            float s = 0.0f;
#pragma unroll
            for (int a = 0; a < 5; ++a)
#pragma unroll
                for (int b = 0; b < 5; ++b)
                    s = fmaf(coef[a][b], win[a][i + b], s);
            out[(size_t)y * nx + x0 + ST_R + i] = s;
        }
    }
}
