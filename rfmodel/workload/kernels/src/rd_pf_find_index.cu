// rfmodel: description = Rodinia particlefilter (float build) find_index_kernel: the resampling step, one thread per particle in 512-thread CTAs; each thread scans the cumulative weight table from the start for the first entry not below its draw and copies that particle's position (all in double).
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 2
// rfmodel: trip = 500
// rfmodel: category = irregular, memory-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia particlefilter (float)
// rfmodel: original = Rodinia 3.1 cuda/particlefilter/ex_particle_CUDA_float_seq.cu: find_index_kernel (512 threads per CTA; -x 128 -y 128 -z 10 -np 1000: 1000 particles, 2 CTAs, a linear search of about 500 steps on average)
// rfmodel: papers = malekeh
// rfmodel: original_regs = 12
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 512

#include "rd_pf.cuh"

// px, py: the particles' positions; cdf: the cumulative normalized weights; draw[p]: particle p's resampling
// position; nx, ny: the resampled positions. weights is the original's parameter, not read (its reset moved
// to the likelihood kernel).
extern "C" __global__ void rd_pf_find_index(double* px, double* py, double* cdf, double* draw, double* nx,
                                            double* ny, double* weights, int n)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    rd_pf_resample(p, px, py, cdf, draw, nx, ny, n);
    __syncthreads();
}
