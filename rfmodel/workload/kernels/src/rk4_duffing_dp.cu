// rfmodel: description = Double-precision RK4 integration of two coupled, driven Duffing oscillators, one parameter set per thread; the drive phase is advanced by a rotation, and the mean energy uses an FP64 division.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 120
// rfmodel: trip = 32
// rfmodel: category = compute-bound, fp-heavy, register-sensitive, cache-insensitive

struct State {
    double x1, v1, x2, v2;
};

__device__ __forceinline__ State deriv(const State& s, double alpha, double beta, double delta, double kc, double drive)
{
    State d;
    d.x1 = s.v1;
    d.v1 = -delta * s.v1 - alpha * s.x1 - beta * s.x1 * s.x1 * s.x1 + kc * (s.x2 - s.x1) + drive;
    d.x2 = s.v2;
    d.v2 = -delta * s.v2 - alpha * s.x2 - beta * s.x2 * s.x2 * s.x2 + kc * (s.x1 - s.x2);
    return d;
}

__device__ __forceinline__ State axpy(const State& s, double h, const State& d)
{
    State r;
    r.x1 = fma(h, d.x1, s.x1);
    r.v1 = fma(h, d.v1, s.v1);
    r.x2 = fma(h, d.x2, s.x2);
    r.v2 = fma(h, d.v2, s.v2);
    return r;
}

extern "C" __global__ void __launch_bounds__(128)
rk4_duffing_dp(int nsys, int steps, double dt, double delta, double kc, double gamma,
               double rot_c, double rot_s, const double* __restrict__ alphas,
               const double* __restrict__ betas, double2* __restrict__ state, double2* __restrict__ stats)
{
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nsys; i += stride) {
        const double alpha = alphas[i];
        const double beta = betas[i];
        // Two double2 per system: (x1, v1) then (x2, v2).
        const double2 s1 = state[2 * i];
        const double2 s2 = state[2 * i + 1];
        State s = {s1.x, s1.y, s2.x, s2.y};
        // (fc, fs) = (cos, sin) of the drive phase; rot_c/rot_s rotate it by half a step.
        double fc = 1.0, fs = 0.0;
        double amax = 0.0, esum = 0.0;

        for (int n = 0; n < steps; ++n) {
            const double hc = fc * rot_c - fs * rot_s;
            const double hs = fs * rot_c + fc * rot_s;
            const double nc = hc * rot_c - hs * rot_s;
            const double ns = hs * rot_c + hc * rot_s;

            const State k1 = deriv(s, alpha, beta, delta, kc, gamma * fc);
            const State k2 = deriv(axpy(s, 0.5 * dt, k1), alpha, beta, delta, kc, gamma * hc);
            const State k3 = deriv(axpy(s, 0.5 * dt, k2), alpha, beta, delta, kc, gamma * hc);
            const State k4 = deriv(axpy(s, dt, k3), alpha, beta, delta, kc, gamma * nc);
            const double w = dt / 6.0;
            s.x1 += w * (k1.x1 + 2.0 * k2.x1 + 2.0 * k3.x1 + k4.x1);
            s.v1 += w * (k1.v1 + 2.0 * k2.v1 + 2.0 * k3.v1 + k4.v1);
            s.x2 += w * (k1.x2 + 2.0 * k2.x2 + 2.0 * k3.x2 + k4.x2);
            s.v2 += w * (k1.v2 + 2.0 * k2.v2 + 2.0 * k3.v2 + k4.v2);
            fc = nc;
            fs = ns;

            amax = fmax(amax, fmax(fabs(s.x1), fabs(s.x2)));
            const double x1sq = s.x1 * s.x1, x2sq = s.x2 * s.x2;
            esum += 0.5 * (s.v1 * s.v1 + s.v2 * s.v2) + 0.5 * alpha * (x1sq + x2sq)
                  + 0.25 * beta * (x1sq * x1sq + x2sq * x2sq) + 0.5 * kc * (s.x1 - s.x2) * (s.x1 - s.x2);
        }
        state[2 * i] = make_double2(s.x1, s.v1);
        state[2 * i + 1] = make_double2(s.x2, s.v2);
        stats[i] = make_double2(amax, esum / (double)steps);
    }
}
