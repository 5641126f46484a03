// rfmodel: description = Rodinia backprop bpnn_layerforward_CUDA: a 16 x 16 CTA per 16 input units; each thread scales one input-to-hidden weight by its input in shared memory, a 4-level tree over the CTA's rows sums the products per hidden unit, and the CTA writes its partial sums.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 4096
// rfmodel: trip = 4
// rfmodel: category = fp-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia backprop
// rfmodel: original = Rodinia 3.1 cuda/backprop/backprop_cuda_kernel.cu: bpnn_layerforward_CUDA (16 x 16 threads per CTA, 65536 input units and 16 hidden: a 1 x 4096 grid)
// rfmodel: papers = stt
// rfmodel: original_regs = 20
// rfmodel: original_shared = 1088
// rfmodel: original_threads_per_cta = 256

// The CTA's tile: RD_BP_ROWS input units (threadIdx.y) by RD_BP_COLS hidden units (threadIdx.x).
#define RD_BP_ROWS 16
#define RD_BP_COLS 16

// Weights w are (n_in + 1) x (n_hid + 1), row-major, row 0 and column 0 the bias entries; x[1..n_in] the
// input units. The products are left in w (the original does so too) and each CTA's 16 sums per hidden
// unit go to partial[blockIdx.y * n_hid + j]. hidden is the original's unused output-layer pointer.
extern "C" __global__ void rd_backprop_forward(float* x, float* hidden, float* w, float* partial, int n_in,
                                               int n_hid)
{
    const int cy = blockIdx.y;
    const int j = threadIdx.x;
    const int k = threadIdx.y;
    const int at = (n_hid + 1) * RD_BP_ROWS * cy + (n_hid + 1) * k + j + 1 + (n_hid + 1);
    const int xin = RD_BP_ROWS * cy + k + 1;

    __shared__ float x_tile[RD_BP_ROWS];
    __shared__ float prod[RD_BP_ROWS][RD_BP_COLS];

    if (j == 0) x_tile[k] = x[xin];
    __syncthreads();
    prod[k][j] = w[at];
    __syncthreads();
    prod[k][j] = prod[k][j] * x_tile[k];
    __syncthreads();

    // pairwise tree over the rows; the level count and stride come from the fast log2/pow intrinsics,
    // as in the original
    for (int lev = 1; lev <= __log2f(RD_BP_ROWS); lev++) {
        const int stride = __powf(2, lev);
        if (k % stride == 0) prod[k][j] = prod[k][j] + prod[k + stride / 2][j];
        __syncthreads();
    }
    w[at] = prod[k][j];
    __syncthreads();
    if (j == 0) {
        partial[cy * n_hid + k] = prod[j][k];
    }
}
