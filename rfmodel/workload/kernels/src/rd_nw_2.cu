// rfmodel: description = Rodinia nw needle_cuda_shared_2: Needleman-Wunsch scoring of the lower-right half of the score matrix, one 16 x 16 tile per CTA of 16 threads along an anti-diagonal of tiles; each CTA loads its tile's substitution scores and the borders into shared memory, fills the tile anti-diagonal by anti-diagonal (max of the diagonal plus the substitution score and the two gap moves), and writes it back.
// rfmodel: threads_per_cta = 16
// rfmodel: ctas = 127
// rfmodel: trip = 16
// rfmodel: category = integer-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia nw
// rfmodel: original = Rodinia 3.1 cuda/nw/needle_kernel.cu: needle_cuda_shared_2 (16 threads per CTA; 2048 x 2048 sequences, penalty 10: 128 tiles a side, launch i has i CTAs, the widest 127)
// rfmodel: papers = stt, cerf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 2180
// rfmodel: original_threads_per_cta = 16

// tile edge: threads per CTA, and the rows and columns of a tile
#define RD_NW_TILE 16

// the best of three scores (the last one on ties, as the original's helper)
__device__ __forceinline__ int rd_nw_best(int a, int b, int c)
{
    const int k = (a <= b) ? b : a;
    return (k <= c) ? c : k;
}

// m is the (cols x cols) score matrix, row 0 and column 0 the gap borders; ref the substitution scores of
// each cell. Launch diag of the sweep handles tiles (tile_x, tile_y) along one anti-diagonal of the
// tiles x tiles grid of tiles; gap is the gap penalty.
extern "C" __global__ void rd_nw_2(int* ref, int* m, int cols, int gap, int diag, int tiles)
{
    const int b = blockIdx.x;
    const int c = threadIdx.x;
    const int tile_x = b + tiles - diag;
    const int tile_y = tiles - b - 1;

    const int base = cols * RD_NW_TILE * tile_y + RD_NW_TILE * tile_x;
    const int at = base + c + (cols + 1);  // the tile's cell (0, c)
    const int north = base + c + 1;        // the row above the tile
    const int west = base + cols;          // the column left of the tile
    const int corner = base;

    __shared__ int score[RD_NW_TILE + 1][RD_NW_TILE + 1];
    __shared__ int subst[RD_NW_TILE][RD_NW_TILE];

    for (int r = 0; r < RD_NW_TILE; r++) subst[r][c] = ref[at + cols * r];
    __syncthreads();
    if (c == 0) score[0][0] = m[corner];
    score[c + 1][0] = m[west + cols * c];
    __syncthreads();
    score[0][c + 1] = m[north];
    __syncthreads();

    // the tile's upper-left triangle: anti-diagonal d has d + 1 cells, thread c takes column c
    for (int d = 0; d < RD_NW_TILE; d++) {
        if (c <= d) {
            const int x = c + 1;
            const int y = d - c + 1;
            score[y][x] = rd_nw_best(score[y - 1][x - 1] + subst[y - 1][x - 1], score[y][x - 1] - gap,
                                     score[y - 1][x] - gap);
        }
        __syncthreads();
    }
    // the lower-right triangle
    for (int d = RD_NW_TILE - 2; d >= 0; d--) {
        if (c <= d) {
            const int x = c + RD_NW_TILE - d;
            const int y = RD_NW_TILE - c;
            score[y][x] = rd_nw_best(score[y - 1][x - 1] + subst[y - 1][x - 1], score[y][x - 1] - gap,
                                     score[y - 1][x] - gap);
        }
        __syncthreads();
    }

    for (int r = 0; r < RD_NW_TILE; r++) m[at + r * cols] = score[r + 1][c + 1];
}
