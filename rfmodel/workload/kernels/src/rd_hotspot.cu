// rfmodel: description = Rodinia hotspot: thermal simulation on a 2-D grid with a pyramid of time steps per launch; each 16x16 CTA stages a tile of temperature and power in shared memory and advances it `iteration` steps, the valid region shrinking by one cell per side each step (the stencil is evaluated in double, as the original's 2.0 literals make it).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 1849
// rfmodel: trip = 2
// rfmodel: category = compute-bound, fp-heavy, register-insensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia hotspot
// rfmodel: original = Rodinia 3.1 cuda/hotspot/hotspot.cu: calculate_temp (16x16 threads, 512x512 grid, pyramid height 2: 43x43 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 32
// rfmodel: original_shared = 3072
// rfmodel: original_threads_per_cta = 256

// The tile edge is the original's default BLOCK_SIZE: it fixes the shared tiles and the CTA shape.
#define RD_HS_TILE 16

// A CTA covers a TILE x TILE window of the grid, of which only the inner (TILE - 2*iteration)^2 cells are
// its own result: the outer ring is recomputed by the neighbouring CTAs (a halo that shrinks by one cell per
// step). Neighbours outside the chip are replaced by the cell itself (an insulated boundary).
extern "C" __global__ void rd_hotspot(int iteration, float* power, float* temp_src, float* temp_dst,
                                      int grid_cols, int grid_rows, int border_cols, int border_rows,
                                      float Cap, float Rx, float Ry, float Rz, float step, float time_elapsed)
{
    __shared__ float tile_t[RD_HS_TILE][RD_HS_TILE];   // temperature, advanced in place
    __shared__ float tile_p[RD_HS_TILE][RD_HS_TILE];   // power
    __shared__ float tile_next[RD_HS_TILE][RD_HS_TILE]; // the step's result before it is committed

    float ambient = 80.0;
    const float k_step = step / Cap;
    const float gx = 1 / Rx;
    const float gy = 1 / Ry;
    const float gz = 1 / Rz;

    const int lx = threadIdx.x;
    const int ly = threadIdx.y;

    // the window of this CTA in grid coordinates (may start before row/col 0 and end past the last)
    const int own = RD_HS_TILE - 2 * iteration;
    const int y0 = own * blockIdx.y - border_rows;
    const int x0 = own * blockIdx.x - border_cols;
    const int y1 = y0 + RD_HS_TILE - 1;
    const int x1 = x0 + RD_HS_TILE - 1;

    const int gy_ = y0 + ly;
    const int gx_ = x0 + lx;
    const int at = grid_cols * gy_ + gx_;

    const bool inside = gy_ >= 0 && gy_ <= grid_rows - 1 && gx_ >= 0 && gx_ <= grid_cols - 1;
    if (inside) {
        tile_t[ly][lx] = temp_src[at];
        tile_p[ly][lx] = power[at];
    }
    __syncthreads();

    // the part of the window that lies on the chip, in tile coordinates
    const int lo_y = (y0 < 0) ? -y0 : 0;
    const int hi_y = (y1 > grid_rows - 1) ? RD_HS_TILE - 1 - (y1 - grid_rows + 1) : RD_HS_TILE - 1;
    const int lo_x = (x0 < 0) ? -x0 : 0;
    const int hi_x = (x1 > grid_cols - 1) ? RD_HS_TILE - 1 - (x1 - grid_cols + 1) : RD_HS_TILE - 1;

    // neighbour indices, clamped to the on-chip part
    int up = ly - 1, down = ly + 1, left = lx - 1, right = lx + 1;
    if (up < lo_y) up = lo_y;
    if (down > hi_y) down = hi_y;
    if (left < lo_x) left = lo_x;
    if (right > hi_x) right = hi_x;

    bool mine;
    for (int s = 0; s < iteration; s++) {
        mine = false;
        if (lx >= s + 1 && lx <= RD_HS_TILE - s - 2 && ly >= s + 1 && ly <= RD_HS_TILE - s - 2 &&
            lx >= lo_x && lx <= hi_x && ly >= lo_y && ly <= hi_y) {
            mine = true;
            const float c = tile_t[ly][lx];
            tile_next[ly][lx] = c + k_step * (tile_p[ly][lx] +
                                              (tile_t[down][lx] + tile_t[up][lx] - 2.0 * c) * gy +
                                              (tile_t[ly][right] + tile_t[ly][left] - 2.0 * c) * gx +
                                              (ambient - c) * gz);
        }
        __syncthreads();
        if (s == iteration - 1)
            break;
        if (mine)
            tile_t[ly][lx] = tile_next[ly][lx];
        __syncthreads();
    }

    // after the last step only the CTA's own cells are still marked
    if (mine)
        temp_dst[at] = tile_next[ly][lx];
}
