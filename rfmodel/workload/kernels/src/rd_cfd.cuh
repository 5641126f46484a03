// Rodinia cfd (euler3d, single precision): the state of a mesh element, shared by the step-factor and flux
// kernels.

#define RD_CFD_GAMMA 1.4f
// the conserved variables, each a block of nelr floats
#define RD_CFD_RHO 0
#define RD_CFD_MOM 1
#define RD_CFD_ENERGY 4
#define RD_CFD_NVAR 5

// Element e's conserved variables (density, momentum, energy) and its velocity.
__device__ inline void rd_cfd_load(const float* variables, int e, int nelr, float& rho, float3& mom, float& energy,
                                   float3& vel)
{
    rho = variables[e + RD_CFD_RHO * nelr];
    mom.x = variables[e + (RD_CFD_MOM + 0) * nelr];
    mom.y = variables[e + (RD_CFD_MOM + 1) * nelr];
    mom.z = variables[e + (RD_CFD_MOM + 2) * nelr];
    energy = variables[e + RD_CFD_ENERGY * nelr];
    vel.x = mom.x / rho;
    vel.y = mom.y / rho;
    vel.z = mom.z / rho;
}

__device__ inline float rd_cfd_speed2(const float3& v)
{
    return v.x * v.x + v.y * v.y + v.z * v.z;
}

__device__ inline float rd_cfd_pressure(float rho, float energy, float speed2)
{
    return (float(RD_CFD_GAMMA) - float(1.0f)) * (energy - float(0.5f) * rho * speed2);
}

__device__ inline float rd_cfd_sound(float rho, float p)
{
    return sqrtf(float(RD_CFD_GAMMA) * p / rho);
}
