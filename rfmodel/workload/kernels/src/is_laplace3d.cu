// rfmodel: description = ISPASS-2009 LPS (3-D Laplace solver, one Jacobi sweep): a 32x4 CTA owns a 32x4 column of the grid and marches along z keeping three z-planes of its tile plus a one-node halo in shared memory; each step shifts the planes down, loads the next one (76 threads also load one halo node each), and writes the six-neighbour average (boundary nodes copied).
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 100
// rfmodel: trip = 100
// rfmodel: category = memory-bound, fp-heavy, register-insensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = ISPASS-2009 LPS
// rfmodel: original = ispass2009-benchmarks LPS/laplace3d_kernel.cu: GPU_laplace3d (BLOCK_X x BLOCK_Y = 32 x 4 threads, grid (1+(NX-1)/32, 1+(NY-1)/4); default grid 100^3: 4 x 25 CTAs, 100 z-steps)
// rfmodel: papers = stt
// rfmodel: original_regs = 21
// rfmodel: original_shared = 2448
// rfmodel: original_threads_per_cta = 128

#define IS_LPS_BX 32
#define IS_LPS_BY 4
// the shared tile: (BX+2) x (BY+2) nodes per plane, three planes (below, current, above)
#define IS_LPS_SJ (IS_LPS_BX + 2)
#define IS_LPS_SK ((IS_LPS_BX + 2) * (IS_LPS_BY + 2))
#define IS_LPS_AT(x, y, stride) ((x) + __mul24((y), (stride)))

// u1 -> u2 on an nx x ny x nz grid whose rows are pitch floats apart (planes ny rows apart)
extern "C" __global__ void is_laplace3d(int nx, int ny, int nz, int pitch, float* u1, float* u2)
{
    __shared__ float tile[3 * IS_LPS_SK];
    const float w = 1.0f / 6.0f;

    // halo duty: the first 2*(BX+BY+2) threads each bring one node of the ring around the tile
    const int flat = threadIdx.x + threadIdx.y * IS_LPS_BX;
    int hs = 0, hg = 0;   // its place in the tile and in the grid
    bool hasHalo = flat < 2 * (IS_LPS_BX + IS_LPS_BY + 2);
    if (hasHalo) {
        int hx, hy;
        if (threadIdx.y < 2) {   // the rows below and above the tile
            hx = threadIdx.x;
            hy = threadIdx.y * (IS_LPS_BY + 1) - 1;
        } else {                 // the columns left and right of it, corners included
            hx = (flat % 2) * (IS_LPS_BX + 1) - 1;
            hy = flat / 2 - IS_LPS_BX - 1;
        }
        hs = IS_LPS_AT(hx + 1, hy + 1, IS_LPS_SJ) + IS_LPS_SK;
        hx = IS_LPS_AT(hx, blockIdx.x, IS_LPS_BX);
        hy = IS_LPS_AT(hy, blockIdx.y, IS_LPS_BY);
        hg = IS_LPS_AT(hx, hy, pitch);
        hasHalo = hx >= 0 && hx < nx && hy >= 0 && hy < ny;
    }

    // the thread's own node
    const int s = IS_LPS_AT(threadIdx.x + 1, threadIdx.y + 1, IS_LPS_SJ) + IS_LPS_SK;
    const int gx = IS_LPS_AT(threadIdx.x, blockIdx.x, IS_LPS_BX);
    const int gy = IS_LPS_AT(threadIdx.y, blockIdx.y, IS_LPS_BY);
    int g = IS_LPS_AT(gx, gy, pitch);
    const bool mine = gx < nx && gy < ny;

    // plane z = 0 goes into the "above" slot; the first step moves it to "current"
    if (mine)
        tile[s + IS_LPS_SK] = u1[g];
    if (hasHalo)
        tile[hs + IS_LPS_SK] = u1[hg];

    for (int z = 0; z < nz; ++z) {
        int gOut = g;
        if (mine) {
            gOut = g;
            g = IS_LPS_AT(g, ny, pitch);
            tile[s - IS_LPS_SK] = tile[s];
            tile[s] = tile[s + IS_LPS_SK];
            if (z < nz - 1)
                tile[s + IS_LPS_SK] = u1[g];
        }
        if (hasHalo) {
            hg = IS_LPS_AT(hg, ny, pitch);
            tile[hs - IS_LPS_SK] = tile[hs];
            tile[hs] = tile[hs + IS_LPS_SK];
            if (z < nz - 1)
                tile[hs + IS_LPS_SK] = u1[hg];
        }
        __syncthreads();

        if (mine) {
            float v;
            if (gx == 0 || gx == nx - 1 || gy == 0 || gy == ny - 1 || z == 0 || z == nz - 1)
                v = tile[s];   // Dirichlet boundary: kept
            else
                v = (tile[s - 1] + tile[s + 1] + tile[s - IS_LPS_SJ] + tile[s + IS_LPS_SJ] + tile[s - IS_LPS_SK] +
                     tile[s + IS_LPS_SK]) * w;
            u2[gOut] = v;
        }
        __syncthreads();
    }
}
