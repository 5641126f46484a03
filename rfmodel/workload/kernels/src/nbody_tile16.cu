// rfmodel: description = All-pairs gravitational forces with 16 bodies per thread: each thread keeps the positions and force accumulators of its 16 bodies in registers and streams every other body through them (rsqrtf per interaction).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 64
// rfmodel: trip = 64
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-insensitive

extern "C" __global__ void __launch_bounds__(256)
nbody_tile16(int n, float soft2, const float4* __restrict__ pos, float4* __restrict__ force)
{
    const int first = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
    if (first + 16 > n) return;
    float px[16], py[16], pz[16], fx[16], fy[16], fz[16];
#pragma unroll
    for (int b = 0; b < 16; ++b) {
        const float4 p = pos[first + b];
        px[b] = p.x; py[b] = p.y; pz[b] = p.z;
        fx[b] = 0.0f; fy[b] = 0.0f; fz[b] = 0.0f;
    }
    for (int j = 0; j < n; ++j) {
        const float4 q = pos[j];
#pragma unroll
        for (int b = 0; b < 16; ++b) {
            const float dx = q.x - px[b], dy = q.y - py[b], dz = q.z - pz[b];
            const float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, soft2)));
            const float inv = rsqrtf(r2);
            const float s = q.w * inv * inv * inv;
            fx[b] = fmaf(dx, s, fx[b]);
            fy[b] = fmaf(dy, s, fy[b]);
            fz[b] = fmaf(dz, s, fz[b]);
        }
    }
#pragma unroll
    for (int b = 0; b < 16; ++b)
        force[first + b] = make_float4(fx[b], fy[b], fz[b], 0.0f);
}
