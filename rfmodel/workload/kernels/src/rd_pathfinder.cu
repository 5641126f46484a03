// rfmodel: description = Rodinia pathfinder dynproc_kernel: dynamic programming down a grid of wall costs, one thread per column in 256-thread CTAs; each CTA advances its columns (plus a halo that shrinks by one a side per row) several rows in shared memory, each row taking the cheapest of the three cells above plus the wall cost, then writes its inner columns.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 463
// rfmodel: trip = 20
// rfmodel: category = integer-heavy, compute-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia pathfinder
// rfmodel: original = Rodinia 3.1 cuda/pathfinder/pathfinder.cu: dynproc_kernel (256 threads per CTA; 100000 columns, 100 rows, pyramid height 20: 463 CTAs of 216 inner columns)
// rfmodel: papers = stt, cerf
// rfmodel: original_regs = 16
// rfmodel: original_shared = 2048
// rfmodel: original_threads_per_cta = 256

#define RD_PF_CTA 256
// halo columns a side consumed per row
#define RD_PF_HALO 1

// steps: rows advanced by this launch (the pyramid's height); wall row (first_row + s) holds the costs of
// the s-th row advanced; src is the cost row the launch starts from, dst the row it ends at. halo: the
// columns each CTA reads beyond its inner ones on the left (the pyramid's height times RD_PF_HALO).
extern "C" __global__ void rd_pathfinder(int steps, int* wall, int* src, int* dst, int cols, int rows,
                                         int first_row, int halo)
{
    __shared__ int cur[RD_PF_CTA];
    __shared__ int nxt[RD_PF_CTA];

    const int b = blockIdx.x;
    const int c = threadIdx.x;

    // the CTA's inner columns, and where its 256 columns start in the row
    const int inner = RD_PF_CTA - steps * RD_PF_HALO * 2;
    const int x0 = inner * b - halo;
    const int x1 = x0 + RD_PF_CTA - 1;
    const int x = x0 + c;

    // the part of the CTA's columns inside the grid; a neighbour outside it is clamped to the edge
    const int lo = (x0 < 0) ? -x0 : 0;
    const int hi = (x1 > cols - 1) ? RD_PF_CTA - 1 - (x1 - cols + 1) : RD_PF_CTA - 1;
    int left = c - 1;
    int right = c + 1;
    left = (left < lo) ? lo : left;
    right = (right > hi) ? hi : right;
    const bool inside = c >= lo && c <= hi;

    if (x >= 0 && x <= cols - 1) {
        cur[c] = src[x];
    }
    __syncthreads();

    bool done;
    for (int s = 0; s < steps; s++) {
        done = false;
        if (c >= s + 1 && c <= RD_PF_CTA - s - 2 && inside) {
            done = true;
            const int l = cur[left];
            const int m = cur[c];
            const int r = cur[right];
            int best = (l <= m) ? l : m;
            best = (best <= r) ? best : r;
            nxt[c] = best + wall[cols * (first_row + s) + x];
        }
        __syncthreads();
        if (s == steps - 1) break;
        if (done) cur[c] = nxt[c];
        __syncthreads();
    }

    if (done) {
        dst[x] = nxt[c];
    }
}
