// rfmodel: description = Parboil spmv (JDS format): one thread per row of the row-permuted sparse matrix; it walks the jagged diagonals (their starts and each warp's diagonal count in constant memory), software-pipelined so that the loads of diagonal k and k-1 overlap the multiply-add of k-2, and scatters its dot product through the permutation.
// rfmodel: threads_per_cta = 192
// rfmodel: ctas = 765
// rfmodel: trip = 23
// rfmodel: category = memory-bound, irregular, fp-heavy, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Parboil spmv
// rfmodel: original = Parboil benchmarks/spmv/src/cuda/jds_kernels.cu: spmv_jds (192 threads from compute_active_thread when rows*32 exceed the SMs' 1536-thread capacity; large dataset Dubcova3, 146689 rows, 4585 warps of rows); its two __constant__ tables of 5000 ints shrunk to 2048 each so both fit the executor's 16 KiB bank 3 (at most 65536 rows)
// rfmodel: papers = stt
// rfmodel: original_regs = 32
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 192

// Per jagged diagonal: where it starts in data/cols; per warp of 32 rows: how many diagonals it has
// (the rows are sorted by decreasing length, so a warp's count is its first row's length).
#define PA_SPMV_MAX 2048
__constant__ int pa_spmv_diag_start[PA_SPMV_MAX];
__constant__ int pa_spmv_warp_diags[PA_SPMV_MAX];

// nzcnt is passed as the original passes it (the per-warp counts it holds are read from constant memory).
extern "C" __global__ void pa_spmv_jds(float* y, const float* data, const int* cols, const int* perm,
                                       const float* x, const int* nzcnt, const int rows)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const int ndiag = pa_spmv_warp_diags[row >> 5];
    float acc = 0.0f;

    // diagonal 0: value, column and x entry
    int at = pa_spmv_diag_start[0] + row;
    float val = data[at];
    int col = cols[at];
    float xv = x[col];
    if (ndiag > 1) {
        // the column of diagonal 1 is fetched ahead; each step then fetches the value of the previous
        // diagonal, the column of the next, the x entry of the previous, and adds the product two behind
        at = pa_spmv_diag_start[1] + row;
        col = cols[at];
        for (int k = 2; k < ndiag; ++k) {
            const float valNext = data[at];
            at = pa_spmv_diag_start[k] + row;
            const int colNext = cols[at];
            const float xNext = x[col];
            acc += val * xv;
            col = colNext;
            val = valNext;
            xv = xNext;
        }
        const float valLast = data[at];
        const float xLast = x[col];
        acc += val * xv;
        val = valLast;
        xv = xLast;
    }
    acc += val * xv;
    y[perm[row]] = acc;
}
