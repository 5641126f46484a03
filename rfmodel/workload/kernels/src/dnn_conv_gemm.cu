// rfmodel: description = DNN GEMM-based convolution: out[K][P] = filters[K][C*R*S] x cols[C*R*S][P] over the im2col matrix, a shared-memory tiled SGEMM (16x16 tiles of both operands staged per step, one output per thread, bounds-checked edges).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 3136
// rfmodel: trip = 72
// rfmodel: category = compute-bound, fp-heavy, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = DeepBench conv_bench (the GEMM of a GEMM-based convolution; DeepBench itself calls cuDNN)
// rfmodel: original = none (written from DeepBench's shapes: conv_bench training set W = H = 56, C = 128, K = 256, 3x3, pad 1, stride 1: a 256 x 1152 by 1152 x 3136 product per image; Tango's convolutions are direct, with no shared-memory GEMM)
// rfmodel: papers = malekeh, corf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 2048
// rfmodel: original_threads_per_cta = 256

#define CONV_TILE 16

// Thread (ty, tx) of CTA (bx, by) computes out[by*16 + ty][bx*16 + tx]. Each step stages a 16x16 tile of the
// filters (rows of K) and of the column matrix (columns of P) in shared memory, zero-padded past the edges,
// and accumulates their product in a register.
extern "C" __global__ void dnn_conv_gemm(int k_out, int pixels, int depth, const float* __restrict__ filters,
                                         const float* __restrict__ cols, float* __restrict__ out)
{
    __shared__ float f_tile[CONV_TILE][CONV_TILE];
    __shared__ float c_tile[CONV_TILE][CONV_TILE];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * CONV_TILE + ty;  // output channel
    const int col = blockIdx.x * CONV_TILE + tx;  // output pixel
    float acc = 0.0f;
    for (int k0 = 0; k0 < depth; k0 += CONV_TILE) {
        const int fk = k0 + tx;
        const int ck = k0 + ty;
        f_tile[ty][tx] = (row < k_out && fk < depth) ? filters[(size_t)row * depth + fk] : 0.0f;
        c_tile[ty][tx] = (ck < depth && col < pixels) ? cols[(size_t)ck * pixels + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < CONV_TILE; k++) {
            acc += f_tile[ty][k] * c_tile[k][tx];
        }
        __syncthreads();
    }
    if (row < k_out && col < pixels) {
        out[(size_t)row * pixels + col] = acc;
    }
}
