// rfmodel: description = 2D convolution with a 7x7 filter in constant memory: a 16x16 CTA loads its output tile plus a 3-pixel halo into shared memory, then each thread computes one output pixel; CTAs stride over tile rows.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 128
// rfmodel: trip = 49
// rfmodel: category = compute-bound, fp-heavy, cache-insensitive, register-insensitive

#define CR 3
#define CW (2 * CR + 1)
#define CT 16
#define CS (CT + 2 * CR)

__constant__ float c_filter[CW * CW];

extern "C" __global__ void __launch_bounds__(CT * CT)
conv2d_const(int width, int height, const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float tile[CS][CS + 1];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int tid = ty * CT + tx;
    const int x0 = blockIdx.x * CT;
    const int tiles_y = (height + CT - 1) / CT;

    for (int by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const int y0 = by * CT;
        for (int l = tid; l < CS * CS; l += CT * CT) {
            const int sy = l / CS, sx = l % CS;
            const int gx = x0 + sx - CR, gy = y0 + sy - CR;
            tile[sy][sx] = (gx >= 0 && gx < width && gy >= 0 && gy < height) ? in[(size_t)gy * width + gx] : 0.0f;
        }
        __syncthreads();

        float acc = 0.0f;
#pragma unroll
        for (int fy = 0; fy < CW; ++fy)
#pragma unroll
            for (int fx = 0; fx < CW; ++fx)
                acc = fmaf(c_filter[fy * CW + fx], tile[ty + fy][tx + fx], acc);

        const int ox = x0 + tx, oy = y0 + ty;
        if (ox < width && oy < height)
            out[(size_t)oy * width + ox] = acc;
        __syncthreads();
    }
}
