// rfmodel: description = Rodinia lud, perimeter step: each CTA of 32 threads takes one 16x16 block of the row right of the factored diagonal block and one of the column below it; the first half-warp solves L X = A for the row block (forward substitution), the second X U = A for the column block, all three blocks in shared memory.
// rfmodel: threads_per_cta = 32
// rfmodel: ctas = 15
// rfmodel: trip = 16
// rfmodel: category = compute-bound, fp-heavy, register-insensitive, cache-insensitive, irregular
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia lud
// rfmodel: original = Rodinia 3.1 cuda/lud/cuda/lud_kernel.cu: lud_perimeter (32 threads; 256x256 matrix, first step: 15 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 32
// rfmodel: original_shared = 3072
// rfmodel: original_threads_per_cta = 32

// The block edge is the original's default BLOCK_SIZE.
#define RD_LUD_B 16

// Threads 0..15 own a column of the row block, threads 16..31 a row of the column block. Both halves load
// half of the diagonal block.
extern "C" __global__ void rd_lud_perimeter(float* m, int matrix_dim, int offset)
{
    __shared__ float diag[RD_LUD_B][RD_LUD_B];
    __shared__ float rowb[RD_LUD_B][RD_LUD_B];
    __shared__ float colb[RD_LUD_B][RD_LUD_B];

    int r, j, at;
    int c;

    if (threadIdx.x < RD_LUD_B) {
        c = threadIdx.x;
        at = offset * matrix_dim + offset;
        for (r = 0; r < RD_LUD_B / 2; r++) {
            diag[r][c] = m[at + c];
            at += matrix_dim;
        }
        at = offset * matrix_dim + offset;
        for (r = 0; r < RD_LUD_B; r++) {
            rowb[r][c] = m[at + (blockIdx.x + 1) * RD_LUD_B + c];
            at += matrix_dim;
        }
    } else {
        c = threadIdx.x - RD_LUD_B;
        at = (offset + RD_LUD_B / 2) * matrix_dim + offset;
        for (r = RD_LUD_B / 2; r < RD_LUD_B; r++) {
            diag[r][c] = m[at + c];
            at += matrix_dim;
        }
        at = (offset + (blockIdx.x + 1) * RD_LUD_B) * matrix_dim + offset;
        for (r = 0; r < RD_LUD_B; r++) {
            colb[r][c] = m[at + c];
            at += matrix_dim;
        }
    }
    __syncthreads();

    if (threadIdx.x < RD_LUD_B) {
        // row block: forward substitution with the unit lower factor, column c
        c = threadIdx.x;
        for (r = 1; r < RD_LUD_B; r++) {
            for (j = 0; j < r; j++)
                rowb[r][c] -= diag[r][j] * rowb[j][c];
        }
    } else {
        // column block: row c solves x U = a, one unknown at a time
        c = threadIdx.x - RD_LUD_B;
        for (r = 0; r < RD_LUD_B; r++) {
            for (j = 0; j < r; j++)
                colb[c][r] -= colb[c][j] * diag[j][r];
            colb[c][r] /= diag[r][r];
        }
    }
    __syncthreads();

    if (threadIdx.x < RD_LUD_B) {
        // row 0 of the row block is unchanged
        c = threadIdx.x;
        at = (offset + 1) * matrix_dim + offset;
        for (r = 1; r < RD_LUD_B; r++) {
            m[at + (blockIdx.x + 1) * RD_LUD_B + c] = rowb[r][c];
            at += matrix_dim;
        }
    } else {
        c = threadIdx.x - RD_LUD_B;
        at = (offset + (blockIdx.x + 1) * RD_LUD_B) * matrix_dim + offset;
        for (r = 0; r < RD_LUD_B; r++) {
            m[at + c] = colb[r][c];
            at += matrix_dim;
        }
    }
}
