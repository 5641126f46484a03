// rfmodel: description = CUDA SDK matrixMul with 32x32 tiles: each 32x32 CTA walks a row of A's tiles and a column of B's tiles, staging one tile of each in shared memory per step; each thread accumulates one element of C over the fully unrolled inner product.
// rfmodel: threads_per_cta = 1024
// rfmodel: ctas = 200
// rfmodel: trip = 10
// rfmodel: category = compute-bound, fp-heavy, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK matrixMul
// rfmodel: original = cuda-samples Samples/0_Introduction/matrixMul/matrixMul.cu: MatrixMulCUDA<32> (32x32 threads, A 320x320, B 640x320, 20x10 CTAs)
// rfmodel: papers = cerf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 8192
// rfmodel: original_threads_per_cta = 1024

#define SDK_MM_TILE 32

// C (hA x wB) = A (hA x wA) * B (wA x wB), row-major, all extents multiples of the tile.
extern "C" __global__ void sdk_matrixmul(float* C, float* A, float* B, int wA, int wB)
{
    __shared__ float tileA[SDK_MM_TILE][SDK_MM_TILE];
    __shared__ float tileB[SDK_MM_TILE][SDK_MM_TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    // A's tiles of this CTA's row run from a_first to a_last; B's tiles of its column start at b_first
    const int a_first = wA * SDK_MM_TILE * blockIdx.y;
    const int a_last = a_first + wA - 1;
    const int b_first = SDK_MM_TILE * blockIdx.x;
    float acc = 0.0f;
    for (int a = a_first, b = b_first; a <= a_last; a += SDK_MM_TILE, b += SDK_MM_TILE * wB) {
        tileA[ty][tx] = A[a + wA * ty + tx];
        tileB[ty][tx] = B[b + wB * ty + tx];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < SDK_MM_TILE; ++k)
            acc += tileA[ty][k] * tileB[k][tx];
        __syncthreads();
    }
    C[wB * SDK_MM_TILE * blockIdx.y + SDK_MM_TILE * blockIdx.x + wB * ty + tx] = acc;
}
