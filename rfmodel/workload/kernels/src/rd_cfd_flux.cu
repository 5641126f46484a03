// rfmodel: description = Rodinia cfd (euler3d, single precision), flux kernel: one thread per mesh element gathers the conserved variables of its four neighbours (indirect, irregular loads), recomputes their pressure, sound speed and flux contributions and accumulates artificial viscosity and the face fluxes; wall and far-field faces use the free-stream state from constant memory. Register-heavy.
// rfmodel: threads_per_cta = 192
// rfmodel: ctas = 506
// rfmodel: trip = 4
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-sensitive, irregular
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia cfd (euler3d)
// rfmodel: original = Rodinia 3.1 cuda/cfd/euler3d.cu: cuda_compute_flux (192 threads, fvcorr.domn.097K: 97046 elements padded to 97152, 506 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 56
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 192

#include "rd_cfd.cuh"

#define RD_CFD_NDIM 3
#define RD_CFD_NNB 4

// the free stream: its conserved variables and the flux contributions of its state (set by the host)
__constant__ float rd_cfd_ff_var[RD_CFD_NVAR];
__constant__ float3 rd_cfd_ff_fc_mom_x[1];
__constant__ float3 rd_cfd_ff_fc_mom_y[1];
__constant__ float3 rd_cfd_ff_fc_mom_z[1];
__constant__ float3 rd_cfd_ff_fc_energy[1];

// The momentum and energy fluxes of a state along x, y and z (the momentum flux tensor is symmetric).
__device__ inline void rd_cfd_flux_of(const float3& mom, float energy, float p, const float3& v, float3& fx,
                                      float3& fy, float3& fz, float3& fe)
{
    fx.x = v.x * mom.x + p;
    fx.y = v.x * mom.y;
    fx.z = v.x * mom.z;
    fy.x = fx.y;
    fy.y = v.y * mom.y + p;
    fy.z = v.y * mom.z;
    fz.x = fx.z;
    fz.y = fy.z;
    fz.z = v.z * mom.z + p;
    const float hp = energy + p;
    fe.x = v.x * hp;
    fe.y = v.y * hp;
    fe.z = v.z * hp;
}

// The face flux through a face of normal n: the mean of the two sides' fluxes along the normal, one axis at a
// time. mom_o and fx_o .. fe_o are the other side's (a neighbour's or the free stream's), mom and fx .. fe this
// element's.
__device__ __forceinline__ void rd_cfd_add_face_flux(const float3& n, const float3& mom_o, const float3& fx_o,
                                                     const float3& fy_o, const float3& fz_o, const float3& fe_o,
                                                     const float3& mom, const float3& fx, const float3& fy,
                                                     const float3& fz, const float3& fe, float& acc_rho,
                                                     float3& acc_mom, float& acc_energy)
{
    float k = float(0.5f) * n.x;
    acc_rho += k * (mom_o.x + mom.x);
    acc_energy += k * (fe_o.x + fe.x);
    acc_mom.x += k * (fx_o.x + fx.x);
    acc_mom.y += k * (fy_o.x + fy.x);
    acc_mom.z += k * (fz_o.x + fz.x);

    k = float(0.5f) * n.y;
    acc_rho += k * (mom_o.y + mom.y);
    acc_energy += k * (fe_o.y + fe.y);
    acc_mom.x += k * (fx_o.y + fx.y);
    acc_mom.y += k * (fy_o.y + fy.y);
    acc_mom.z += k * (fz_o.y + fz.y);

    k = float(0.5f) * n.z;
    acc_rho += k * (mom_o.z + mom.z);
    acc_energy += k * (fe_o.z + fe.z);
    acc_mom.x += k * (fx_o.z + fx.z);
    acc_mom.y += k * (fy_o.z + fy.z);
    acc_mom.z += k * (fz_o.z + fz.z);
}

// Neighbour index >= 0: an element; -1: a wall face; -2: a far-field face. The grid covers the padded
// element count exactly: no bounds test.
extern "C" __global__ void rd_cfd_flux(int nelr, int* elements_surrounding_elements, float* normals, float* variables,
                                       float* fluxes)
{
    const float smooth = float(0.2f);
    const int e = blockDim.x * blockIdx.x + threadIdx.x;

    float rho, energy;
    float3 mom, vel;
    rd_cfd_load(variables, e, nelr, rho, mom, energy, vel);
    const float speed2 = rd_cfd_speed2(vel);
    const float speed = sqrtf(speed2);
    const float p = rd_cfd_pressure(rho, energy, speed2);
    const float sound = rd_cfd_sound(rho, p);
    float3 fx, fy, fz, fe;
    rd_cfd_flux_of(mom, energy, p, vel, fx, fy, fz, fe);

    // the accumulators (their declaration order fixes the register order of the compiled code)
    float acc_energy = float(0.0f);
    float acc_rho = float(0.0f);
    float3 acc_mom;
    acc_mom.x = float(0.0f);
    acc_mom.y = float(0.0f);
    acc_mom.z = float(0.0f);

#pragma unroll
    for (int f = 0; f < RD_CFD_NNB; f++) {
        const int nb = elements_surrounding_elements[e + f * nelr];
        float3 n;
        n.x = normals[e + (f + 0 * RD_CFD_NNB) * nelr];
        n.y = normals[e + (f + 1 * RD_CFD_NNB) * nelr];
        n.z = normals[e + (f + 2 * RD_CFD_NNB) * nelr];
        const float area = sqrtf(n.x * n.x + n.y * n.y + n.z * n.z);

        if (nb >= 0) {
            float rho_b, energy_b;
            float3 mom_b, vel_b;
            rd_cfd_load(variables, nb, nelr, rho_b, mom_b, energy_b, vel_b);
            const float speed2_b = rd_cfd_speed2(vel_b);
            const float p_b = rd_cfd_pressure(rho_b, energy_b, speed2_b);
            const float sound_b = rd_cfd_sound(rho_b, p_b);
            float3 fx_b, fy_b, fz_b, fe_b;
            rd_cfd_flux_of(mom_b, energy_b, p_b, vel_b, fx_b, fy_b, fz_b, fe_b);

            // artificial viscosity, scaled by the face area and the fastest signal speed of the two cells
            float k = -area * smooth * float(0.5f) * (speed + sqrtf(speed2_b) + sound + sound_b);
            acc_rho += k * (rho - rho_b);
            acc_energy += k * (energy - energy_b);
            acc_mom.x += k * (mom.x - mom_b.x);
            acc_mom.y += k * (mom.y - mom_b.y);
            acc_mom.z += k * (mom.z - mom_b.z);

            rd_cfd_add_face_flux(n, mom_b, fx_b, fy_b, fz_b, fe_b, mom, fx, fy, fz, fe, acc_rho, acc_mom,
                                 acc_energy);
        } else if (nb == -1) {
            // a wall: only the pressure pushes
            acc_mom.x += n.x * p;
            acc_mom.y += n.y * p;
            acc_mom.z += n.z * p;
        } else if (nb == -2) {
            // the far field: the free stream stands in for the neighbour
            // its momentum, variables RD_CFD_MOM .. RD_CFD_MOM + 2, read in place as one float3
            const float3& ff_mom = reinterpret_cast<const float3&>(rd_cfd_ff_var[RD_CFD_MOM]);
            rd_cfd_add_face_flux(n, ff_mom, rd_cfd_ff_fc_mom_x[0], rd_cfd_ff_fc_mom_y[0], rd_cfd_ff_fc_mom_z[0],
                                 rd_cfd_ff_fc_energy[0], mom, fx, fy, fz, fe, acc_rho, acc_mom, acc_energy);
        }
    }

    fluxes[e + RD_CFD_RHO * nelr] = acc_rho;
    fluxes[e + (RD_CFD_MOM + 0) * nelr] = acc_mom.x;
    fluxes[e + (RD_CFD_MOM + 1) * nelr] = acc_mom.y;
    fluxes[e + (RD_CFD_MOM + 2) * nelr] = acc_mom.z;
    fluxes[e + RD_CFD_ENERGY * nelr] = acc_energy;
}
