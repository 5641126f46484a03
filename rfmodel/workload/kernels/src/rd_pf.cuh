// Rodinia particlefilter: the resampling search of its naive and float builds.

// Particle p (when p < n) takes the position of the first particle whose cumulative normalized weight cdf[k]
// is not below its draw (the last particle when none is): px, py are the particles' positions, nx, ny the
// resampled ones. Each thread scans cdf from the start, as the original.
__device__ __forceinline__ void rd_pf_resample(int p, double* px, double* py, double* cdf, double* draw, double* nx,
                                               double* ny, int n)
{
    if (p < n) {
        int pick = -1;
        for (int k = 0; k < n; k++) {
            if (cdf[k] >= draw[p]) {
                pick = k;
                break;
            }
        }
        if (pick == -1) {
            pick = n - 1;
        }
        nx[p] = px[pick];
        ny[p] = py[pick];
    }
}
