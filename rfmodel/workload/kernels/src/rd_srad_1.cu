// rfmodel: description = Rodinia srad (v2), first kernel: speckle-reducing anisotropic diffusion on a 2-D image; each 16x16 CTA stages its tile and the four neighbouring edge strips in shared memory, then each thread computes its pixel's four directional differences and the saturated diffusion coefficient (partly in double, as the original's literals make it).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 16384
// rfmodel: trip = 1
// rfmodel: category = memory-bound, fp-heavy, register-insensitive, cache-sensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia srad (srad_v2)
// rfmodel: original = Rodinia 3.1 cuda/srad/srad_v2/srad_kernel.cu: srad_cuda_1 (16x16 threads, 2048x2048 image: 128x128 CTAs)
// rfmodel: papers = stt, cerf
// rfmodel: original_regs = 22
// rfmodel: original_shared = 6144
// rfmodel: original_threads_per_cta = 256

// The tile edge is the original's default BLOCK_SIZE.
#define RD_SRAD_TILE 16

// Pixels on the image's edge take themselves as the missing neighbour. Unlike the original, the halo loads
// pick their source row/column before loading, so no thread reads outside the image (the original reads
// one row before and after it and then overwrites what it read).
extern "C" __global__ void rd_srad_1(float* E_C, float* W_C, float* N_C, float* S_C, float* J_cuda, float* C_cuda,
                                     int cols, int rows, float q0sqr)
{
    const int bx = blockIdx.x, by = blockIdx.y;
    const int tx = threadIdx.x, ty = threadIdx.y;

    const int corner = cols * RD_SRAD_TILE * by + RD_SRAD_TILE * bx;  // the tile's top-left pixel
    const int me = corner + cols * ty + tx;

    __shared__ float tile[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float coef[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float above[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float below[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float right_of[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float left_of[RD_SRAD_TILE][RD_SRAD_TILE];

    // the row above the tile and the row below it (each thread keeps the one of its column); at the image's
    // top and bottom the image's own first and last rows stand in
    above[ty][tx] = J_cuda[by == 0 ? RD_SRAD_TILE * bx + tx : corner - cols + tx];
    below[ty][tx] = J_cuda[by == gridDim.y - 1 ? corner + cols * (RD_SRAD_TILE - 1) + tx
                                               : corner + cols * RD_SRAD_TILE + tx];
    __syncthreads();

    // the column left of the tile and the one right of it (each thread keeps the one of its row)
    left_of[ty][tx] = J_cuda[bx == 0 ? corner + cols * ty : corner + cols * ty - 1];
    right_of[ty][tx] = J_cuda[bx == gridDim.x - 1 ? corner + cols * ty + RD_SRAD_TILE - 1
                                                  : corner + cols * ty + RD_SRAD_TILE];
    __syncthreads();

    tile[ty][tx] = J_cuda[me];
    __syncthreads();

    const float jc = tile[ty][tx];
    float dn, ds, dw, de;
    // the four differences, by where the pixel lies in the tile: on an edge or a corner of the tile one or
    // two neighbours come from the halo strips
    if (ty == 0 && tx == 0) {  // top-left corner
        dn = above[ty][tx] - jc;
        ds = tile[ty + 1][tx] - jc;
        dw = left_of[ty][tx] - jc;
        de = tile[ty][tx + 1] - jc;
    } else if (ty == 0 && tx == RD_SRAD_TILE - 1) {  // top-right corner
        dn = above[ty][tx] - jc;
        ds = tile[ty + 1][tx] - jc;
        dw = tile[ty][tx - 1] - jc;
        de = right_of[ty][tx] - jc;
    } else if (ty == RD_SRAD_TILE - 1 && tx == RD_SRAD_TILE - 1) {  // bottom-right corner
        dn = tile[ty - 1][tx] - jc;
        ds = below[ty][tx] - jc;
        dw = tile[ty][tx - 1] - jc;
        de = right_of[ty][tx] - jc;
    } else if (ty == RD_SRAD_TILE - 1 && tx == 0) {  // bottom-left corner
        dn = tile[ty - 1][tx] - jc;
        ds = below[ty][tx] - jc;
        dw = left_of[ty][tx] - jc;
        de = tile[ty][tx + 1] - jc;
    } else if (ty == 0) {  // top edge
        dn = above[ty][tx] - jc;
        ds = tile[ty + 1][tx] - jc;
        dw = tile[ty][tx - 1] - jc;
        de = tile[ty][tx + 1] - jc;
    } else if (tx == RD_SRAD_TILE - 1) {  // right edge
        dn = tile[ty - 1][tx] - jc;
        ds = tile[ty + 1][tx] - jc;
        dw = tile[ty][tx - 1] - jc;
        de = right_of[ty][tx] - jc;
    } else if (ty == RD_SRAD_TILE - 1) {  // bottom edge
        dn = tile[ty - 1][tx] - jc;
        ds = below[ty][tx] - jc;
        dw = tile[ty][tx - 1] - jc;
        de = tile[ty][tx + 1] - jc;
    } else if (tx == 0) {  // left edge
        dn = tile[ty - 1][tx] - jc;
        ds = tile[ty + 1][tx] - jc;
        dw = left_of[ty][tx] - jc;
        de = tile[ty][tx + 1] - jc;
    } else {  // inside the tile
        dn = tile[ty - 1][tx] - jc;
        ds = tile[ty + 1][tx] - jc;
        dw = tile[ty][tx - 1] - jc;
        de = tile[ty][tx + 1] - jc;
    }

    // normalised gradient magnitude and Laplacian, then the instantaneous coefficient of variation
    const float grad2 = (dn * dn + ds * ds + dw * dw + de * de) / (jc * jc);
    const float lap = (dn + ds + dw + de) / jc;
    float top = (0.5 * grad2) - ((1.0 / 16.0) * (lap * lap));
    float bot = 1 + (.25 * lap);
    const float q2 = top / (bot * bot);

    // the diffusion coefficient, saturated to [0, 1]
    bot = (q2 - q0sqr) / (q0sqr * (1 + q0sqr));
    const float c = 1.0 / (1.0 + bot);
    if (c < 0) {
        coef[ty][tx] = 0;
    } else if (c > 1) {
        coef[ty][tx] = 1;
    } else {
        coef[ty][tx] = c;
    }
    __syncthreads();

    C_cuda[me] = coef[ty][tx];
    E_C[me] = de;
    W_C[me] = dw;
    S_C[me] = ds;
    N_C[me] = dn;
}
