// rfmodel: description = PolyBench fdtd-2d, step 1 of a time step: ey -= 0.5*(hz - hz of the row above), row 0 set from the source term fict[t]; one thread per grid point, no loop.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 16384
// rfmodel: trip = 1
// rfmodel: category = memory-bound, cache-insensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC fdtd-2d
// rfmodel: original = PolyBench-ACC CUDA/stencils/fdtd-2d/fdtd2d.cu: fdtd_step1_kernel (32x8 threads, standard dataset NX = NY = 2048, TMAX = 500 launches)
// rfmodel: papers = cerf
// rfmodel: original_regs = 12
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of the fields: the standard dataset's, fixed at compile time as in the original.
#define PB_FDTD_NY 2048

extern "C" __global__ void pb_fdtd2d_1(int nx, int ny, float* fict, float* ex, float* ey, float* hz, int t)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && j < ny) {
        if (i == 0) {
            ey[j] = fict[t];  // the boundary row takes the source value of this time step
        } else {
            ey[i * PB_FDTD_NY + j] = ey[i * PB_FDTD_NY + j] - 0.5f * (hz[i * PB_FDTD_NY + j] - hz[(i - 1) * PB_FDTD_NY + j]);
        }
    }
}
