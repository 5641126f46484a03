// rfmodel: description = Rodinia cfd (euler3d, single precision), step-factor kernel: one thread per mesh element reads its five conserved variables (structure-of-arrays) and its area and computes the local time-step factor from the flow speed and the speed of sound (three square roots, two divisions).
// rfmodel: threads_per_cta = 192
// rfmodel: ctas = 506
// rfmodel: trip = 1
// rfmodel: category = memory-bound, fp-heavy, register-insensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia cfd (euler3d)
// rfmodel: original = Rodinia 3.1 cuda/cfd/euler3d.cu: cuda_compute_step_factor (192 threads, fvcorr.domn.097K: 97046 elements padded to 97152, 506 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 21
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 192

#include "rd_cfd.cuh"

// The grid covers the (padded) element count exactly, as in the original: no bounds test.
extern "C" __global__ void rd_cfd_step_factor(int nelr, float* variables, float* areas, float* step_factors)
{
    const int e = blockDim.x * blockIdx.x + threadIdx.x;

    float rho, energy;
    float3 mom, vel;
    rd_cfd_load(variables, e, nelr, rho, mom, energy, vel);
    const float speed2 = rd_cfd_speed2(vel);
    const float p = rd_cfd_pressure(rho, energy, speed2);
    const float sound = rd_cfd_sound(rho, p);

    // half the cell size over the fastest signal speed, already divided by the area
    step_factors[e] = float(0.5f) / (sqrtf(areas[e]) * (sqrtf(speed2) + sound));
}
