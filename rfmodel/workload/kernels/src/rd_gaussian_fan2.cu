// rfmodel: description = Rodinia gaussian Fan2: for elimination step t, a 2-D grid of 4 x 4 CTAs, one thread per (row below the pivot, column from the pivot on), subtracts the row's multiple of the pivot row from the matrix; the threads of the first column also update the right-hand side.
// rfmodel: threads_per_cta = 16
// rfmodel: ctas = 65536
// rfmodel: trip = 1
// rfmodel: category = fp-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia gaussian
// rfmodel: original = Rodinia 3.1 cuda/gaussian/gaussian.cu: Fan2 (4 x 4 threads per CTA, one launch per step t; matrix 1024 x 1024 (-s 1024, the largest input shipped): a 256 x 256 grid)
// rfmodel: papers = corf, malekeh, cerf
// rfmodel: original_regs = 16
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 16

// a (n x n, row-major) and rhs are updated in place with the multipliers mult[row][t] of Fan1; x runs over
// the rows below the pivot, y over the columns from the pivot on. skip is the original's unused (n - t).
extern "C" __global__ void rd_gaussian_fan2(float* mult, float* a, float* rhs, int n, int skip, int t)
{
    if (threadIdx.x + blockIdx.x * blockDim.x >= n - 1 - t) return;
    if (threadIdx.y + blockIdx.y * blockDim.y >= n - t) return;
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int row = x + 1 + t;
    a[n * row + (y + t)] -= mult[n * row + t] * a[n * t + (y + t)];
    if (y == 0) {
        rhs[row] -= mult[n * row + (y + t)] * rhs[t];
    }
}
