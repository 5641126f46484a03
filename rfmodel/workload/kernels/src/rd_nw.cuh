// Rodinia nw: one 16 x 16 tile of the Needleman-Wunsch score matrix per CTA of 16 threads (rd_nw_1 sweeps the
// upper-left half of the matrix's tiles, rd_nw_2 the lower-right half).

// tile edge: threads per CTA, and the rows and columns of a tile
#define RD_NW_TILE 16

// the best of three scores (the last one on ties, as the original's helper)
__device__ __forceinline__ int rd_nw_best(int a, int b, int c)
{
    const int k = (a <= b) ? b : a;
    return (k <= c) ? c : k;
}

// Scores tile (tile_x, tile_y): m is the (cols x cols) score matrix, row 0 and column 0 the gap borders; ref
// the substitution scores of each cell; gap the gap penalty. The CTA loads the tile's substitution scores and
// its borders into shared memory, the corner with the substitution scores (corner_first, as the original's
// first kernel) or after them (its second), fills the tile anti-diagonal by anti-diagonal and writes it back.
__device__ __forceinline__ void rd_nw_tile(int* ref, int* m, int cols, int gap, int tile_x, int tile_y,
                                           bool corner_first)
{
    const int c = threadIdx.x;
    const int base = cols * RD_NW_TILE * tile_y + RD_NW_TILE * tile_x;
    const int at = base + c + (cols + 1);  // the tile's cell (0, c)
    const int north = base + c + 1;        // the row above the tile
    const int west = base + cols;          // the column left of the tile
    const int corner = base;

    __shared__ int score[RD_NW_TILE + 1][RD_NW_TILE + 1];
    __shared__ int subst[RD_NW_TILE][RD_NW_TILE];

    if (corner_first && c == 0) score[0][0] = m[corner];
    for (int r = 0; r < RD_NW_TILE; r++) subst[r][c] = ref[at + cols * r];
    __syncthreads();
    if (!corner_first && c == 0) score[0][0] = m[corner];
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
