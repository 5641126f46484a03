// rfmodel: description = Rodinia particlefilter (float build) normalize_weights_kernel: 512-thread CTAs, one thread per particle, divide each weight by the total (read once per CTA into shared memory); particle 0's thread alone then builds the whole cumulative weight table in a serial loop and draws the systematic-resampling offset from its linear congruential seed, and every particle gets its draw from that offset (all in double).
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 2
// rfmodel: trip = 1000
// rfmodel: category = irregular, memory-bound, register-insensitive, cache-sensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia particlefilter (float)
// rfmodel: original = Rodinia 3.1 cuda/particlefilter/ex_particle_CUDA_float_seq.cu: normalize_weights_kernel (512 threads per CTA; -x 128 -y 128 -z 10 -np 1000: 1000 particles, 2 CTAs)
// rfmodel: papers = malekeh
// rfmodel: original_regs = 26
// rfmodel: original_shared = 16
// rfmodel: original_threads_per_cta = 512

#include <climits>

// One step of the C library's linear congruential generator on seed[k] (int arithmetic wrapping, as the
// original's); returns the new state scaled to [0, 1).
__device__ double rd_pf_uniform(int* seed, int k)
{
    const int modulus = INT_MAX;
    const int next = 1103515245 * seed[k] + 12345;
    seed[k] = next % modulus;
    return fabs(seed[k] / ((double)modulus));
}

// total[0] holds the sum of the weights (the previous kernel's reduction). As in the original, thread 0
// of CTA 0 builds the table from the weights and writes the offset to draw[0] while the other CTAs run,
// with no grid-wide barrier in between.
extern "C" __global__ void rd_pf_normalize(double* weights, int n, double* total, double* cdf, double* draw,
                                           int* seed)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ double offset, sum;

    if (threadIdx.x == 0) {
        sum = total[0];
    }
    __syncthreads();

    if (p < n) {
        weights[p] = weights[p] / sum;
    }
    __syncthreads();

    if (p == 0) {
        // the running sum of the weights, one particle after the other
        cdf[0] = weights[0];
        for (int k = 1; k < n; k++) {
            cdf[k] = cdf[k - 1] + weights[k];
        }
        draw[0] = (1 / ((double)n)) * rd_pf_uniform(seed, p);
    }
    __syncthreads();

    if (threadIdx.x == 0) {
        offset = draw[0];
    }
    __syncthreads();

    if (p < n) {
        draw[p] = offset + p / ((double)n);
    }
}
