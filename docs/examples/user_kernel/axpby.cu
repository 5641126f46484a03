// A user's kernel, for the worked example of docs/execute.md: y = a*x + b*y over a grid-stride loop,
// each result clamped to [-limit, limit] (a data-dependent branch).
extern "C" __global__ void axpby(int n, float a, float b, float limit, const float* x, float* y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float v = fmaf(a, x[i], b * y[i]);
        if (v > limit) {
            v = limit;
        } else if (v < -limit) {
            v = -limit;
        }
        y[i] = v;
    }
}
