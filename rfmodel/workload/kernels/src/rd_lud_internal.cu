// rfmodel: description = Rodinia lud, internal step: each 16x16 CTA updates one block of the trailing submatrix, A -= L_col * U_row, staging the L block to its left and the U block above it in shared memory (a 16-term dot product per thread).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 225
// rfmodel: trip = 16
// rfmodel: category = compute-bound, fp-heavy, register-insensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia lud
// rfmodel: original = Rodinia 3.1 cuda/lud/cuda/lud_kernel.cu: lud_internal (16x16 threads; 256x256 matrix, first step: 15x15 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 30
// rfmodel: original_shared = 2048
// rfmodel: original_threads_per_cta = 256

// The block edge is the original's default BLOCK_SIZE.
#define RD_LUD_B 16

extern "C" __global__ void rd_lud_internal(float* m, int matrix_dim, int offset)
{
    __shared__ float u_blk[RD_LUD_B][RD_LUD_B];  // the factored block row above
    __shared__ float l_blk[RD_LUD_B][RD_LUD_B];  // the factored block column to the left

    const int row0 = offset + (blockIdx.y + 1) * RD_LUD_B;
    const int col0 = offset + (blockIdx.x + 1) * RD_LUD_B;

    u_blk[threadIdx.y][threadIdx.x] = m[(offset + threadIdx.y) * matrix_dim + col0 + threadIdx.x];
    l_blk[threadIdx.y][threadIdx.x] = m[(row0 + threadIdx.y) * matrix_dim + offset + threadIdx.x];
    __syncthreads();

    float acc = 0;
    for (int k = 0; k < RD_LUD_B; k++)
        acc += l_blk[threadIdx.y][k] * u_blk[k][threadIdx.x];
    m[(row0 + threadIdx.y) * matrix_dim + col0 + threadIdx.x] -= acc;
}
