// rfmodel: description = Rodinia particlefilter (naive) kernel: the resampling step, one thread per particle in 128-thread CTAs; each thread scans the cumulative weight table from the start for the first entry not below its systematic-resampling draw and copies that particle's position (all in double).
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 8
// rfmodel: trip = 500
// rfmodel: category = irregular, memory-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia particlefilter (naive)
// rfmodel: original = Rodinia 3.1 cuda/particlefilter/ex_particle_CUDA_naive_seq.cu: kernel (128 threads per CTA; -x 128 -y 128 -z 10 -np 1000: 1000 particles, 8 CTAs, a linear search of about 500 steps on average)
// rfmodel: papers = malekeh
// rfmodel: original_regs = 12
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 128

#include "rd_pf.cuh"

// cdf: the particles' cumulative normalized weights; draw[p]: particle p's resampling position in [0, 1);
// px, py: the particles' positions; nx, ny: the resampled ones.
extern "C" __global__ void rd_particlefilter(double* px, double* py, double* cdf, double* draw, double* nx,
                                             double* ny, int n)
{
    const int p = blockDim.x * blockIdx.x + threadIdx.x;
    rd_pf_resample(p, px, py, cdf, draw, nx, ny, n);
}
