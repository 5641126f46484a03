// rfmodel: description = Rodinia kmeans invert_mapping: one thread per point in 256-thread CTAs transposes the feature table from point-major to feature-major, a loop over the point's features with a strided read and a coalesced write per step.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 1936
// rfmodel: trip = 34
// rfmodel: category = memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia kmeans
// rfmodel: original = Rodinia 3.1 cuda/kmeans/kmeans_cuda_kernel.cu: invert_mapping (256 threads per CTA, 1-D grid of 44*44 = 1936 CTAs; kdd_cup: 494020 points, 34 features)
// rfmodel: papers = ltrf, malekeh, cerf
// rfmodel: original_regs = 30
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// src holds the points one after another (point p's feature f at [p * nfeat + f]); dst receives the same
// values feature by feature (feature f of point p at [p + f * npts]), the layout rd_kmeans_point reads.
extern "C" __global__ void rd_kmeans_invert(float* src, float* dst, int npts, int nfeat)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p < npts) {
        for (int f = 0; f < nfeat; f++) {
            dst[f * npts + p] = src[p * nfeat + f];
        }
    }
}
