// rfmodel: description = Single-precision y = a*x + y over a grid-stride loop (two loads, one FMA, one store per element).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 120
// rfmodel: trip = 8
// rfmodel: category = memory-bound, register-insensitive, cache-insensitive

extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = fmaf(a, x[i], y[i]);
    }
}
