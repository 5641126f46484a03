// rfmodel: description = All-pairs gravitational n-body step: bodies are staged through shared memory in CTA-sized tiles; each interaction uses rsqrtf; the velocity update clamps speed with sqrtf and a division.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 64
// rfmodel: category = compute-bound, fp-heavy, cache-insensitive, register-insensitive

extern "C" __global__ void __launch_bounds__(256)
nbody_forces(int n, float dt, float soft2, float vmax, const float4* __restrict__ pos, float4* __restrict__ vel)
{
    __shared__ float4 sh[256];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float4 p = (i < n) ? pos[i] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);

    float ax = 0.0f, ay = 0.0f, az = 0.0f, pot = 0.0f;
    for (int tile = 0; tile < n; tile += blockDim.x) {
        const int j = tile + threadIdx.x;
        // Padding bodies get zero mass (w) and therefore contribute nothing.
        sh[threadIdx.x] = (j < n) ? pos[j] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < blockDim.x; ++k) {
            const float4 q = sh[k];
            const float dx = q.x - p.x;
            const float dy = q.y - p.y;
            const float dz = q.z - p.z;
            const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, soft2)));
            const float inv = rsqrtf(r2);
            const float minv = q.w * inv;
            const float f = minv * inv * inv;
            ax = fmaf(dx, f, ax);
            ay = fmaf(dy, f, ay);
            az = fmaf(dz, f, az);
            pot -= minv;
        }
        __syncthreads();
    }

    if (i < n) {
        float4 v = vel[i];
        v.x = fmaf(ax, dt, v.x);
        v.y = fmaf(ay, dt, v.y);
        v.z = fmaf(az, dt, v.z);
        const float speed = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z);
        if (speed > vmax) {
            const float scale = vmax / speed;
            v.x *= scale;
            v.y *= scale;
            v.z *= scale;
        }
        v.w = 0.5f * p.w * pot;
        vel[i] = v;
    }
}
