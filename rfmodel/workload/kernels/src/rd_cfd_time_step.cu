// rfmodel: description = Rodinia cfd (euler3d, single precision), time-step kernel: one thread per mesh element advances its five conserved variables by one Runge-Kutta stage, old + step_factor/(RK+1-j) * flux (structure-of-arrays, streaming).
// rfmodel: threads_per_cta = 192
// rfmodel: ctas = 506
// rfmodel: trip = 1
// rfmodel: category = memory-bound, fp-heavy, register-insensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia cfd (euler3d)
// rfmodel: original = Rodinia 3.1 cuda/cfd/euler3d.cu: cuda_time_step (192 threads, fvcorr.domn.097K: 97046 elements padded to 97152, 506 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 24
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 192

#define RD_CFD_RK 3
#define RD_CFD_RHO 0
#define RD_CFD_MOM 1
#define RD_CFD_ENERGY 4

extern "C" __global__ void rd_cfd_time_step(int j, int nelr, float* old_variables, float* variables,
                                            float* step_factors, float* fluxes)
{
    const int e = blockDim.x * blockIdx.x + threadIdx.x;
    const float f = step_factors[e] / float(RD_CFD_RK + 1 - j);

    variables[e + RD_CFD_RHO * nelr] = old_variables[e + RD_CFD_RHO * nelr] + f * fluxes[e + RD_CFD_RHO * nelr];
    variables[e + RD_CFD_ENERGY * nelr] =
        old_variables[e + RD_CFD_ENERGY * nelr] + f * fluxes[e + RD_CFD_ENERGY * nelr];
    variables[e + (RD_CFD_MOM + 0) * nelr] =
        old_variables[e + (RD_CFD_MOM + 0) * nelr] + f * fluxes[e + (RD_CFD_MOM + 0) * nelr];
    variables[e + (RD_CFD_MOM + 1) * nelr] =
        old_variables[e + (RD_CFD_MOM + 1) * nelr] + f * fluxes[e + (RD_CFD_MOM + 1) * nelr];
    variables[e + (RD_CFD_MOM + 2) * nelr] =
        old_variables[e + (RD_CFD_MOM + 2) * nelr] + f * fluxes[e + (RD_CFD_MOM + 2) * nelr];
}
