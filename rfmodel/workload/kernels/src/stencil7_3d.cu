// rfmodel: description = 3D 7-point Jacobi stencil; a 32x8 CTA tile marches along z, keeping the z-1/z/z+1 column in registers and the xy plane in shared memory.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 128
// rfmodel: trip = 64
// rfmodel: category = memory-bound, cache-sensitive, register-insensitive, fp-heavy

#define TX 32
#define TY 8

extern "C" __global__ void __launch_bounds__(TX * TY)
stencil7_3d(int nx, int ny, int nz, float c0, float c1, const float* __restrict__ in, float* __restrict__ out)
{
    __shared__ float tile[TY + 2][TX + 2];

    const int gx = blockIdx.x * TX + threadIdx.x;
    const int gy = blockIdx.y * TY + threadIdx.y;
    const int lx = threadIdx.x + 1;
    const int ly = threadIdx.y + 1;
    const bool inside = gx < nx && gy < ny;
    const bool interior = inside && gx > 0 && gx < nx - 1 && gy > 0 && gy < ny - 1;
    const size_t plane = (size_t)nx * ny;
    const size_t idx = (size_t)gy * nx + gx;

    float below = 0.0f;
    float cur = inside ? in[idx] : 0.0f;
    float above = (inside && nz > 1) ? in[idx + plane] : 0.0f;

    for (int z = 0; z < nz; ++z) {
        const size_t zoff = (size_t)z * plane;
        __syncthreads();
        tile[ly][lx] = cur;
        if (threadIdx.x == 0)
            tile[ly][0] = (gx > 0 && gy < ny) ? in[zoff + idx - 1] : 0.0f;
        if (threadIdx.x == TX - 1)
            tile[ly][TX + 1] = (gx + 1 < nx && gy < ny) ? in[zoff + idx + 1] : 0.0f;
        if (threadIdx.y == 0)
            tile[0][lx] = (gy > 0 && gx < nx) ? in[zoff + idx - nx] : 0.0f;
        if (threadIdx.y == TY - 1)
            tile[TY + 1][lx] = (gy + 1 < ny && gx < nx) ? in[zoff + idx + nx] : 0.0f;
        __syncthreads();

        if (interior && z > 0 && z < nz - 1) {
            const float s = tile[ly][lx - 1] + tile[ly][lx + 1] + tile[ly - 1][lx] + tile[ly + 1][lx] + below + above;
            out[zoff + idx] = fmaf(c1, s, c0 * cur);
        }
        below = cur;
        cur = above;
        above = (inside && z + 2 < nz) ? in[zoff + 2 * plane + idx] : 0.0f;
    }
}
