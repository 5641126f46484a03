// rfmodel: description = Rodinia srad (v2), second kernel: each 16x16 CTA stages its tile of the image and of the diffusion coefficients (plus the coefficient strips below and right of it) in shared memory, forms the divergence from the four directional differences and updates the image (the update in double, as the original's literal makes it).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 16384
// rfmodel: trip = 1
// rfmodel: category = memory-bound, fp-heavy, register-insensitive, cache-sensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia srad (srad_v2)
// rfmodel: original = Rodinia 3.1 cuda/srad/srad_v2/srad_kernel.cu: srad_cuda_2 (16x16 threads, 2048x2048 image: 128x128 CTAs)
// rfmodel: papers = stt, cerf
// rfmodel: original_regs = 28
// rfmodel: original_shared = 5120
// rfmodel: original_threads_per_cta = 256

// The tile edge is the original's default BLOCK_SIZE.
#define RD_SRAD_TILE 16

// The north and west coefficients are the pixel's own (as in the original); the south and east ones come from
// the next pixel, at the image's bottom and right edges from the pixel itself. As in the original, the strip
// loads first read the next tile's row/column and the edge tiles then replace it: on the last row of tiles
// that first read lies up to one image row past the end of C_cuda, so the caller gives C_cuda a spare row.
extern "C" __global__ void rd_srad_2(float* E_C, float* W_C, float* N_C, float* S_C, float* J_cuda, float* C_cuda,
                                     int cols, int rows, float lambda, float q0sqr)
{
    const int bx = blockIdx.x, by = blockIdx.y;
    const int tx = threadIdx.x, ty = threadIdx.y;

    const int corner = cols * RD_SRAD_TILE * by + RD_SRAD_TILE * bx;
    const int me = corner + cols * ty + tx;

    __shared__ float c_below[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float c_right[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float c_tile[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float updated[RD_SRAD_TILE][RD_SRAD_TILE];
    __shared__ float image[RD_SRAD_TILE][RD_SRAD_TILE];

    image[ty][tx] = J_cuda[me];
    __syncthreads();

    // the coefficient row below the tile; the last row of tiles takes the image's own last row instead
    c_below[ty][tx] = C_cuda[corner + cols * RD_SRAD_TILE + tx];
    if (by == gridDim.y - 1) {
        c_below[ty][tx] = C_cuda[cols * RD_SRAD_TILE * (gridDim.y - 1) + RD_SRAD_TILE * bx + cols * (RD_SRAD_TILE - 1) + tx];
    }
    __syncthreads();

    // the coefficient column right of the tile; the last column of tiles takes the image's own last column
    c_right[ty][tx] = C_cuda[corner + cols * ty + RD_SRAD_TILE];
    if (bx == gridDim.x - 1) {
        c_right[ty][tx] = C_cuda[cols * RD_SRAD_TILE * by + RD_SRAD_TILE * (gridDim.x - 1) + cols * ty + RD_SRAD_TILE - 1];
    }
    __syncthreads();

    c_tile[ty][tx] = C_cuda[me];
    __syncthreads();

    const float cc = c_tile[ty][tx];
    float cn, cs, cw, ce;
    if (ty == RD_SRAD_TILE - 1 && tx == RD_SRAD_TILE - 1) {  // bottom-right corner: both from the strips
        cn = cc;
        cs = c_below[ty][tx];
        cw = cc;
        ce = c_right[ty][tx];
    } else if (tx == RD_SRAD_TILE - 1) {  // right edge
        cn = cc;
        cs = c_tile[ty + 1][tx];
        cw = cc;
        ce = c_right[ty][tx];
    } else if (ty == RD_SRAD_TILE - 1) {  // bottom edge
        cn = cc;
        cs = c_below[ty][tx];
        cw = cc;
        ce = c_tile[ty][tx + 1];
    } else {  // inside the tile
        cn = cc;
        cs = c_tile[ty + 1][tx];
        cw = cc;
        ce = c_tile[ty][tx + 1];
    }

    // divergence of the coefficient-weighted differences, then the image update
    const float div = cn * N_C[me] + cs * S_C[me] + cw * W_C[me] + ce * E_C[me];
    updated[ty][tx] = image[ty][tx] + 0.25 * lambda * div;
    __syncthreads();

    J_cuda[me] = updated[ty][tx];
}
