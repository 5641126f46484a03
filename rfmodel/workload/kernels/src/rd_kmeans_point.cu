// rfmodel: description = Rodinia kmeans kmeansPoint: one thread per point over a 2-D grid of 256-thread CTAs; for each cluster, the squared distance over all features (features stored feature-major, centers in __constant__ memory) and the nearest cluster's index as the point's membership. The original fetches features through a texture; here they are plain global loads of the same array.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 1936
// rfmodel: trip = 5
// rfmodel: category = fp-heavy, compute-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia kmeans
// rfmodel: original = Rodinia 3.1 cuda/kmeans/kmeans_cuda_kernel.cu: kmeansPoint (256 threads per CTA, kdd_cup: 494020 points, 34 features, 5 clusters, a 44 x 44 grid; measured with the feature texture fetch replaced by a load of the same array, as texture references are gone from nvcc 13)
// rfmodel: papers = ltrf, malekeh, cerf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

#include <cfloat>

// The center table's capacity, as the original sizes its constant array: up to 32 clusters of up to 34
// features (center c's feature f at [c * nfeat + f]).
#define RD_KM_MAX_CLUSTERS 32
#define RD_KM_MAX_FEATURES 34

__constant__ float rd_km_centers[RD_KM_MAX_CLUSTERS * RD_KM_MAX_FEATURES];

// feat is feature-major: feature f of point p at [p + f * npts]. centers_g, partial_centers and
// changed are the original's global copies and per-CTA reduction outputs, unused here as in its default
// build (the reductions are done on the host).
extern "C" __global__ void rd_kmeans_point(float* feat, int nfeat, int npts, int nclust, int* member,
                                           float* centers_g, float* partial_centers, int* changed)
{
    const unsigned int cta = gridDim.x * blockIdx.y + blockIdx.x;
    const unsigned int p = cta * blockDim.x * blockDim.y + threadIdx.x;
    int best = -1;
    if (p < npts) {
        float best_d = FLT_MAX;
        for (int c = 0; c < nclust; c++) {
            const int row = c * nfeat;
            float d2 = 0.0f;
            for (int f = 0; f < nfeat; f++) {
                const float t = feat[p + f * npts] - rd_km_centers[row + f];
                d2 += t * t;
            }
            if (d2 < best_d) {
                best_d = d2;
                best = c;
            }
        }
    }
    if (p < npts) {
        member[p] = best;
    }
}
