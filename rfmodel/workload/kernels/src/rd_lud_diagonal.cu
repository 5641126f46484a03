// rfmodel: description = Rodinia lud, diagonal step: one CTA of 16 threads factors the 16x16 diagonal block of the matrix in shared memory (Doolittle LU without pivoting, the unit lower and the upper factor in place), alternating a column of L and a row of U with a barrier between.
// rfmodel: threads_per_cta = 16
// rfmodel: ctas = 1
// rfmodel: trip = 15
// rfmodel: category = compute-bound, fp-heavy, register-insensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia lud
// rfmodel: original = Rodinia 3.1 cuda/lud/cuda/lud_kernel.cu: lud_diagonal (16 threads, 1 CTA per step; 256x256 matrix)
// rfmodel: papers = stt
// rfmodel: original_regs = 32
// rfmodel: original_shared = 1024
// rfmodel: original_threads_per_cta = 16

// The block edge is the original's default BLOCK_SIZE.
#define RD_LUD_B 16

// Thread t owns column t of the block while loading and storing, and row t while it eliminates.
extern "C" __global__ void rd_lud_diagonal(float* m, int matrix_dim, int offset)
{
    __shared__ float blk[RD_LUD_B][RD_LUD_B];
    const int t = threadIdx.x;

    int at = offset * matrix_dim + offset;
    for (int r = 0; r < RD_LUD_B; r++) {
        blk[r][t] = m[at + t];
        at += matrix_dim;
    }
    __syncthreads();

    for (int k = 0; k < RD_LUD_B - 1; k++) {
        // column k of L, below the diagonal: row t subtracts what the earlier columns explain and divides
        if (t > k) {
            for (int j = 0; j < k; j++)
                blk[t][k] -= blk[t][j] * blk[j][k];
            blk[t][k] /= blk[k][k];
        }
        __syncthreads();
        // row k+1 of U, right of the diagonal
        if (t > k) {
            for (int j = 0; j < k + 1; j++)
                blk[k + 1][t] -= blk[k + 1][j] * blk[j][t];
        }
        __syncthreads();
    }

    // row 0 is unchanged by the factorisation: only rows 1.. go back
    at = (offset + 1) * matrix_dim + offset;
    for (int r = 1; r < RD_LUD_B; r++) {
        m[at + t] = blk[r][t];
        at += matrix_dim;
    }
}
