// rfmodel: description = Rodinia streamcluster, pgain's cost kernel: one thread per point computes the weighted squared distance to a candidate centre over all dimensions (coordinates stored dimension-major, so each step is a coalesced load plus a broadcast one), compares it with the point's current assignment cost and adds the saving or the loss to its own row of the work array.
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 128
// rfmodel: trip = 256
// rfmodel: category = memory-bound, cache-sensitive, fp-heavy, register-insensitive, irregular
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia streamcluster
// rfmodel: original = Rodinia 3.1 cuda/streamcluster/streamcluster_cuda.cu: kernel_compute_cost (512 threads; run: dim 256, 65536 points per chunk: 128 CTAs)
// rfmodel: papers = cerf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 512

// A point as the host lays it out (the original's struct; the kernel reads weight, assign and cost).
struct RdScPoint {
    float weight;
    float* coord;
    long assign;  // the point that is this one's centre
    float cost;   // weight times the distance to that centre
};

// Squared Euclidean distance between points a and b; coordinate i of point q is coord[i * num + q].
__device__ float rd_sc_dist2(int a, int b, int num, int dim, float* coord)
{
    float sum = 0.0;
    for (int i = 0; i < dim; i++) {
        const float d = coord[(i * num) + a] - coord[(i * num) + b];
        sum += d * d;
    }
    return sum;
}

// The grid may be 2-D (the host splits more than 65536 CTAs into rows); work_mem has one row of `stride`
// floats per point, indexed by centre (K: opening the candidate x).
extern "C" __global__ void rd_streamcluster(int num, int dim, long x, RdScPoint* p, int K, int stride, float* coord_d,
                                            float* work_mem_d, int* center_table_d, bool* switch_membership_d)
{
    const int cta = blockIdx.x + gridDim.x * blockIdx.y;
    const int me = blockDim.x * cta + threadIdx.x;

    if (me < num) {
        float* row = &work_mem_d[me * stride];
        const float cost_x = rd_sc_dist2(me, x, num, dim, coord_d) * p[me].weight;
        if (cost_x < p[me].cost) {
            // moving to x saves: mark the point and book the saving under the new centre
            switch_membership_d[me] = 1;
            row[K] += cost_x - p[me].cost;
        } else {
            // staying is cheaper: book what closing the current centre would cost
            row[center_table_d[p[me].assign]] += p[me].cost - cost_x;
        }
    }
}
