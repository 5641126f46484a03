// rfmodel: description = CUDA SDK dct8x8, second implementation (forward DCT): a CTA of 8x4x2 threads stages a 32x16 tile (eight 8x8 blocks) in padded shared memory; each thread loads a column of 8 pixels, then runs an 8-point butterfly DCT on one row and, after a barrier, on one column, and writes its column back.
// rfmodel: threads_per_cta = 64
// rfmodel: ctas = 512
// rfmodel: trip = 1
// rfmodel: category = fp-heavy, compute-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK dct8x8
// rfmodel: original = cuda-samples Samples/2_Concepts_and_Techniques/dct8x8/dct8x8_kernel2.cuh: CUDAkernel2DCT (8x4x2 threads, 512x512 image: 16x32 CTAs)
// rfmodel: papers = cerf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 2112
// rfmodel: original_threads_per_cta = 64

#define SDK_DCT_N 8
#define SDK_DCT_TILE_W 32
#define SDK_DCT_TILE_H 16
#define SDK_DCT_PITCH (SDK_DCT_TILE_W + 1)

// sqrt(2) cos(k pi / 16) for the odd part, sqrt(2) cos(pi/8), sqrt(2) cos(3pi/8) for the even part, 1/sqrt(8)
#define SDK_DCT_K1 1.387039845322148f
#define SDK_DCT_K2 1.306562964876377f
#define SDK_DCT_K3 1.175875602419359f
#define SDK_DCT_K5 0.785694958387102f
#define SDK_DCT_K6 0.541196100146197f
#define SDK_DCT_K7 0.275899379282943f
#define SDK_DCT_SCALE 0.3535533905932737f

// In-place orthonormal 8-point DCT-II of p[0], p[s], ..., p[7s] by the even/odd butterfly.
__device__ void sdk_dct_vec8(float* p, int s)
{
    const float v0 = p[0], v1 = p[s], v2 = p[2 * s], v3 = p[3 * s];
    const float v4 = p[4 * s], v5 = p[5 * s], v6 = p[6 * s], v7 = p[7 * s];
    const float s07 = v0 + v7, s16 = v1 + v6, s25 = v2 + v5, s34 = v3 + v4;
    const float d07 = v0 - v7, d61 = v6 - v1, d25 = v2 - v5, d43 = v4 - v3;
    const float ea = s07 + s34, eb = s07 - s34, ec = s16 + s25, ed = s16 - s25;
    p[0] = SDK_DCT_SCALE * (ea + ec);
    p[2 * s] = SDK_DCT_SCALE * (SDK_DCT_K2 * eb + SDK_DCT_K6 * ed);
    p[4 * s] = SDK_DCT_SCALE * (ea - ec);
    p[6 * s] = SDK_DCT_SCALE * (SDK_DCT_K6 * eb - SDK_DCT_K2 * ed);
    p[s] = SDK_DCT_SCALE * (SDK_DCT_K1 * d07 - SDK_DCT_K3 * d61 + SDK_DCT_K5 * d25 - SDK_DCT_K7 * d43);
    p[3 * s] = SDK_DCT_SCALE * (SDK_DCT_K3 * d07 + SDK_DCT_K7 * d61 - SDK_DCT_K1 * d25 + SDK_DCT_K5 * d43);
    p[5 * s] = SDK_DCT_SCALE * (SDK_DCT_K5 * d07 + SDK_DCT_K1 * d61 + SDK_DCT_K7 * d25 - SDK_DCT_K3 * d43);
    p[7 * s] = SDK_DCT_SCALE * (SDK_DCT_K7 * d07 + SDK_DCT_K5 * d61 + SDK_DCT_K3 * d25 + SDK_DCT_K1 * d43);
}

// threadIdx.x: the column within an 8x8 block (and, for the row pass, the row); threadIdx.y: which of the
// tile's four blocks across; threadIdx.z: which of its two blocks down. `stride` is the image's row pitch.
extern "C" __global__ void sdk_dct8x8(float* dst, float* src, int stride)
{
    __shared__ float tile[SDK_DCT_TILE_H * SDK_DCT_PITCH];
    const int col = threadIdx.y * SDK_DCT_N + threadIdx.x;
    const int row0 = threadIdx.z * SDK_DCT_N;
    const int start = __mul24(blockIdx.y * SDK_DCT_TILE_H + row0, stride) + blockIdx.x * SDK_DCT_TILE_W + col;
    src += start;
    dst += start;
    float* mine = tile + row0 * SDK_DCT_PITCH + col;
#pragma unroll
    for (unsigned int r = 0; r < SDK_DCT_N; r++)
        mine[r * SDK_DCT_PITCH] = src[r * stride];
    __syncthreads();
    // rows: thread x of a block transforms row x of it
    sdk_dct_vec8(tile + (row0 + threadIdx.x) * SDK_DCT_PITCH + col - threadIdx.x, 1);
    __syncthreads();
    // columns: each thread its own
    sdk_dct_vec8(mine, SDK_DCT_PITCH);
    __syncthreads();
    for (unsigned int r = 0; r < SDK_DCT_N; r++)
        dst[r * stride] = mine[r * SDK_DCT_PITCH];
}
