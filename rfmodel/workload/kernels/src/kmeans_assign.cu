// rfmodel: description = k-means assignment step: centroids are cached in shared memory; each point (feature-major layout) is compared with every centroid by squared distance, the argmin becomes its membership, and changed memberships are counted.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 120
// rfmodel: trip = 16
// rfmodel: category = compute-bound, fp-heavy, cache-sensitive, register-insensitive

#define KM_MAX_K 32
#define KM_MAX_D 34

extern "C" __global__ void __launch_bounds__(256)
kmeans_assign(int n, int d, int k, const float* __restrict__ points, const float* __restrict__ centroids,
              int* __restrict__ membership, int* __restrict__ changed)
{
    __shared__ float cs[KM_MAX_K * KM_MAX_D];
    for (int l = threadIdx.x; l < k * d; l += blockDim.x)
        cs[l] = centroids[l];
    __syncthreads();

    int local_changes = 0;
    const int stride = gridDim.x * blockDim.x;
    for (int p = blockIdx.x * blockDim.x + threadIdx.x; p < n; p += stride) {
        float best = 3.402823466e38f;
        int arg = 0;
        for (int c = 0; c < k; ++c) {
            float dist = 0.0f;
            for (int f = 0; f < d; ++f) {
                const float diff = points[(size_t)f * n + p] - cs[c * d + f];
                dist = fmaf(diff, diff, dist);
            }
            if (dist < best) {
                best = dist;
                arg = c;
            }
        }
        if (membership[p] != arg) {
            membership[p] = arg;
            ++local_changes;
        }
    }

    for (int off = 16; off > 0; off >>= 1)
        local_changes += __shfl_down_sync(0xffffffffu, local_changes, off);
    if ((threadIdx.x & 31) == 0 && local_changes != 0)
        atomicAdd(changed, local_changes);
}
