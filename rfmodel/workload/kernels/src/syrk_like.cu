// rfmodel: description = Symmetric rank-k update C = alpha*A*A^T + beta*C of the PolyBench kind read straight from global memory: a 32x8 CTA owns a 8x32 tile of C; a warp's lanes read 32 different rows of A (one line each, re-read over 32 steps of a loop kept rolled and by the CTA's 8 warps) and one broadcast row.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 256
// rfmodel: trip = 160
// rfmodel: category = memory-bound, cache-sensitive, register-insensitive, fp-heavy

// A is n x k, row-major; C is n x n, row-major. Thread (tx, ty) of CTA (bx, by) computes
// C[i][j] with j = bx*32 + tx and i = by*8 + ty; every k step reads A[j][kk] (a different row
// per lane) and A[i][kk] (the same address for the whole warp).
extern "C" __global__ void __launch_bounds__(256)
syrk_like(int n, int k, float alpha, float beta, const float* __restrict__ A, float* __restrict__ C)
{
    const int j = blockIdx.x * 32 + threadIdx.x;
    const int i = blockIdx.y * 8 + threadIdx.y;
    if (i >= n || j >= n)
        return;
    const float* ai = A + (size_t)i * k;
    const float* aj = A + (size_t)j * k;
    float acc = 0.0f;
    // kept rolled, as in bicg_like: a line comes back on each of 32 steps, after the lines of the
    // other resident CTAs
#pragma unroll 1
    for (int kk = 0; kk < k; ++kk)
        acc = fmaf(ai[kk], aj[kk], acc);
    float* c = C + (size_t)i * n + j;
    *c = alpha * acc + beta * *c;
}
