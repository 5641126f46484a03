// rfmodel: description = Parboil sad, 4x4 stage (H.264 full-pixel motion estimation): one CTA of 61 threads per 4x4 block of the current frame; the block is staged in shared memory, each thread computes the sums of absolute differences of 18 of the 33x33 search positions three at a time (sliding a 6-pixel window over each reference row), keeps them in shared memory and 32 threads copy them out as 8-byte words.
// rfmodel: threads_per_cta = 61
// rfmodel: ctas = 1584
// rfmodel: trip = 6
// rfmodel: category = integer-heavy, compute-bound, register-sensitive, cache-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Parboil sad
// rfmodel: original = Parboil benchmarks/sad/src/cuda/sad4.cu: mb_sad_calc (61 threads, 2192 bytes of dynamic shared memory, grid (width/4, height/4); default dataset, QCIF 176x144); its 2-D texture fetches of the reference frame measured as clamped plain global loads (as here): 40 registers (63 with a texture object)
// rfmodel: papers = corf
// rfmodel: original_regs = 40
// rfmodel: original_shared = 32
// rfmodel: original_threads_per_cta = 61

// The search window is +-16 pixels around each 4x4 block: 33 x 33 = 1089 positions, padded to 1096 per block.
#define PA_SAD_RANGE 16
#define PA_SAD_DIM 33
#define PA_SAD_NPOS 1089
#define PA_SAD_NPOS_PAD 1096
#define PA_SAD_PER_THREAD 18
#define PA_SAD_TPB ((PA_SAD_NPOS + PA_SAD_PER_THREAD - 1) / PA_SAD_PER_THREAD)  // 61 threads per 4x4 block
// A CTA covers PA_SAD_BW x PA_SAD_BH 4x4 blocks (the original's tiling parameters; both 1 as it is built)
#define PA_SAD_BW 1
#define PA_SAD_BH 1

struct pa_sad_pair {
    int lo, hi;
} __align__(8);

// the CTA's 4x4 blocks of the current frame, 16 pixels each
__shared__ unsigned short pa_sad_cur[PA_SAD_BW * PA_SAD_BH * 16];
// their SADs, PA_SAD_NPOS_PAD per block (dynamic shared memory), also seen as 8-byte words
extern __shared__ unsigned short pa_sad_res[];
extern __shared__ pa_sad_pair pa_sad_res8[];

// The original fetches the reference frame through a 2-D texture whose coordinates clamp to the image;
// here it is a plain global array and the coordinates are clamped the same way.
__device__ __forceinline__ int pa_sad_ref(const unsigned short* ref, int w, int h, int x, int y)
{
    x = min(max(x, 0), w - 1);
    y = min(max(y, 0), h - 1);
    return ref[y * w + x];
}

// sads: 41 * PA_SAD_NPOS_PAD entries per macroblock, of which this stage fills the 16 4x4 blocks' part
// (after the 25 entries per macroblock of the larger block sizes). cur and ref are 16-bit pixel frames of
// (mb_w*16) x (mb_h*16) pixels.
extern "C" __global__ void pa_sad(unsigned short* sads, const unsigned short* cur, const unsigned short* ref,
                                  int mb_w, int mb_h)
{
    const int w = mb_w * 16, h = mb_h * 16;

    // stage the current blocks: a group of 16 threads per 4x4 block, one pixel each
    if ((threadIdx.x >> 4) < PA_SAD_BW * PA_SAD_BH) {
        const int slot = threadIdx.x >> 4;
        const int sy = slot / PA_SAD_BW, sx = slot - sy * PA_SAD_BW;
        const int lane = threadIdx.x & 15;
        const int fx = (blockIdx.x * PA_SAD_BW + sx) << 2, fy = (blockIdx.y * PA_SAD_BH + sy) << 2;
        if ((fx >> 4) < mb_w && (fy >> 4) < mb_h)
            pa_sad_cur[slot * 16 + lane] = cur[(fy + (lane >> 2)) * w + fx + (lane & 3)];
    }
    // the padding of each SAD row is copied out too: clear it (the original leaves it undefined)
    if (threadIdx.x < (PA_SAD_NPOS_PAD - PA_SAD_NPOS) * PA_SAD_BW * PA_SAD_BH) {
        const int q = threadIdx.x / (PA_SAD_NPOS_PAD - PA_SAD_NPOS);
        pa_sad_res[q * PA_SAD_NPOS_PAD + PA_SAD_NPOS + threadIdx.x % (PA_SAD_NPOS_PAD - PA_SAD_NPOS)] = 0;
    }
    __syncthreads();

    // this thread's 4x4 block and its share of the search positions
    const int slot = threadIdx.x / PA_SAD_TPB;
    const int sy = slot / PA_SAD_BW, sx = slot - sy * PA_SAD_BW;
    const int gx = blockIdx.x * PA_SAD_BW + sx, gy = blockIdx.y * PA_SAD_BH + sy;   // in 4-pixel units
    if ((gx >> 2) < mb_w && (gy >> 2) < mb_h) {
        const int x0 = (gx << 2) - PA_SAD_RANGE, y0 = (gy << 2) - PA_SAD_RANGE;   // window origin
        const unsigned short* blk = pa_sad_cur + slot * 16;
        unsigned short* out = pa_sad_res + slot * PA_SAD_NPOS_PAD;
        const int first = (threadIdx.x % PA_SAD_TPB) * PA_SAD_PER_THREAD;
        const int last = min(first + PA_SAD_PER_THREAD, PA_SAD_NPOS);
        const int oy = first / PA_SAD_DIM;
        int dx = first - oy * PA_SAD_DIM;   // search offset along x, 0..32
        int ry = y0 + oy;                   // reference row of the window's top
        for (int pos = first; pos < last; pos += 3) {
            // positions pos, pos+1, pos+2 share a row of the window: a 6-pixel strip serves all three
            unsigned short s0 = 0, s1 = 0, s2 = 0;
            const int rx = x0 + dx;
            for (int r = 0; r < 4; ++r) {
                const unsigned short* c = blk + r * 4;
                int v;
                v = pa_sad_ref(ref, w, h, rx, ry + r);
                s0 += abs(v - c[0]);
                v = pa_sad_ref(ref, w, h, rx + 1, ry + r);
                s0 += abs(v - c[1]); s1 += abs(v - c[0]);
                v = pa_sad_ref(ref, w, h, rx + 2, ry + r);
                s0 += abs(v - c[2]); s1 += abs(v - c[1]); s2 += abs(v - c[0]);
                v = pa_sad_ref(ref, w, h, rx + 3, ry + r);
                s0 += abs(v - c[3]); s1 += abs(v - c[2]); s2 += abs(v - c[1]);
                v = pa_sad_ref(ref, w, h, rx + 4, ry + r);
                s1 += abs(v - c[3]); s2 += abs(v - c[2]);
                v = pa_sad_ref(ref, w, h, rx + 5, ry + r);
                s2 += abs(v - c[3]);
            }
            out[pos] = s0;
            out[pos + 1] = s1;
            out[pos + 2] = s2;
            dx += 3;
            if (dx >= PA_SAD_DIM) {
                dx -= PA_SAD_DIM;
                ++ry;
            }
        }
    }
    __syncthreads();

    // copy each block's row of SADs out, a group of 32 threads per block, 8 bytes each
    if ((threadIdx.x >> 5) < PA_SAD_BW * PA_SAD_BH) {
        const int slot = threadIdx.x >> 5;
        const int sy = slot / PA_SAD_BW, sx = slot - sy * PA_SAD_BW;
        const int gx = blockIdx.x * PA_SAD_BW + sx, gy = blockIdx.y * PA_SAD_BH + sy;
        const int mbx = gx >> 2, mby = gy >> 2;
        if (mbx < mb_w && mby < mb_h) {
            const int sub = 4 * (gy & 3) + (gx & 3);
            pa_sad_pair* dst = reinterpret_cast<pa_sad_pair*>(
                sads + (mb_w * mb_h * 25 + (mby * mb_w + mbx) * 16 + sub) * PA_SAD_NPOS_PAD);
            for (int q = threadIdx.x & 31; q < PA_SAD_NPOS_PAD / 4; q += 32)
                dst[q] = pa_sad_res8[slot * (PA_SAD_NPOS_PAD / 4) + q];
        }
    }
}
