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

#define RD_CFD_GAMMA 1.4f
// the conserved variables, each a block of nelr floats
#define RD_CFD_RHO 0
#define RD_CFD_MOM 1
#define RD_CFD_ENERGY 4

__device__ inline float rd_cfd_pressure(float rho, float energy, float speed2)
{
    return (float(RD_CFD_GAMMA) - float(1.0f)) * (energy - float(0.5f) * rho * speed2);
}

// The grid covers the (padded) element count exactly, as in the original: no bounds test.
extern "C" __global__ void rd_cfd_step_factor(int nelr, float* variables, float* areas, float* step_factors)
{
    const int e = blockDim.x * blockIdx.x + threadIdx.x;

    const float rho = variables[e + RD_CFD_RHO * nelr];
    float3 mom;
    mom.x = variables[e + (RD_CFD_MOM + 0) * nelr];
    mom.y = variables[e + (RD_CFD_MOM + 1) * nelr];
    mom.z = variables[e + (RD_CFD_MOM + 2) * nelr];
    const float energy = variables[e + RD_CFD_ENERGY * nelr];

    float3 vel;
    vel.x = mom.x / rho;
    vel.y = mom.y / rho;
    vel.z = mom.z / rho;
    const float speed2 = vel.x * vel.x + vel.y * vel.y + vel.z * vel.z;
    const float p = rd_cfd_pressure(rho, energy, speed2);
    const float sound = sqrtf(float(RD_CFD_GAMMA) * p / rho);

    // half the cell size over the fastest signal speed, already divided by the area
    step_factors[e] = float(0.5f) / (sqrtf(areas[e]) * (sqrtf(speed2) + sound));
}
