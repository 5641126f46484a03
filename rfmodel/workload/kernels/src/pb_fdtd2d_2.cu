// rfmodel: description = PolyBench fdtd-2d, step 2 of a time step: ex -= 0.5*(hz - hz of the column to the left), for every column but the first; one thread per grid point, no loop.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 16384
// rfmodel: trip = 1
// rfmodel: category = memory-bound, cache-insensitive, fp-heavy, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = PolyBench-ACC fdtd-2d
// rfmodel: original = PolyBench-ACC CUDA/stencils/fdtd-2d/fdtd2d.cu: fdtd_step2_kernel (32x8 threads, standard dataset NX = NY = 2048, TMAX = 500 launches)
// rfmodel: papers = cerf
// rfmodel: original_regs = 12
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// Row stride of the fields: the standard dataset's, fixed at compile time as in the original.
#define PB_FDTD_NY 2048

extern "C" __global__ void pb_fdtd2d_2(int nx, int ny, float* ex, float* ey, float* hz, int t)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < nx && j < ny && j > 0) {
        const int at = i * PB_FDTD_NY + j;
        ex[at] = ex[at] - 0.5f * (hz[at] - hz[at - 1]);
    }
}
