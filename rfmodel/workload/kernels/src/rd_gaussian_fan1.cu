// rfmodel: description = Rodinia gaussian Fan1: for elimination step t, one thread per row below the pivot computes the row's multiplier, its entry in column t divided by the pivot.
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 2
// rfmodel: trip = 1
// rfmodel: category = fp-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia gaussian
// rfmodel: original = Rodinia 3.1 cuda/gaussian/gaussian.cu: Fan1 (512 threads per CTA, one launch per step t; matrix 1024 x 1024 (-s 1024, the largest input shipped): 2 CTAs)
// rfmodel: papers = corf, malekeh, cerf
// rfmodel: original_regs = 15
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 512

// a is the n x n matrix being reduced (row-major), mult the matrix of multipliers; thread r handles row
// t + 1 + r.
extern "C" __global__ void rd_gaussian_fan1(float* mult, float* a, int n, int t)
{
    const unsigned int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n - 1 - t) return;
    const unsigned int row = r + t + 1;
    mult[n * row + t] = a[n * row + t] / a[n * t + t];
}
