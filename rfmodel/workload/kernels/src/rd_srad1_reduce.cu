// rfmodel: description = Rodinia srad (v1) reduce: one step of the image statistics' sum and sum of squares, 512-thread CTAs over a 1-D grid; each CTA stages its 512 partial sums of both in shared memory and adds them in a 9-level in-place tree (the last thread of each pair range accumulating), the last, partly filled CTA treeing the largest power of two of its elements and adding the rest serially, and writes its two sums back to the first slot of its range.
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 450
// rfmodel: trip = 9
// rfmodel: category = memory-bound, fp-heavy, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia srad (srad_v1)
// rfmodel: original = Rodinia 3.1 cuda/srad/srad_v1/reduce_kernel.cu: reduce (512 threads per CTA; ./srad 100 0.5 502 458: 229916 pixels, the first of the reduction's launches: 450 CTAs)
// rfmodel: papers = stt, cerf
// rfmodel: original_regs = 31
// rfmodel: original_shared = 4096
// rfmodel: original_threads_per_cta = 512

// The CTA size is a compile-time constant, as the original's NUMBER_THREADS.
#define RD_SRAD1_THREADS 512

// A full CTA's reduction: a tree over all RD_SRAD1_THREADS partial sums of both statistics in s1 and s2 (the
// last thread of each pair range accumulating), whose last thread stores the CTA's sums at its slot of sums and
// sums2.
__device__ __forceinline__ void rd_srad1_full_tree(float* s1, float* s2, int tx, int bx, int stride, float* sums,
                                                   float* sums2)
{
    for (int w = 2; w <= RD_SRAD1_THREADS; w = 2 * w) {
        if ((tx + 1) % w == 0) {
            s1[tx] = s1[tx] + s1[tx - w / 2];
            s2[tx] = s2[tx] + s2[tx - w / 2];
        }
        __syncthreads();
    }
    if (tx == RD_SRAD1_THREADS - 1) {
        sums[bx * stride * RD_SRAD1_THREADS] = s1[tx];
        sums2[bx * stride * RD_SRAD1_THREADS] = s2[tx];
    }
}

// cnt: how many partial sums this launch reduces; stride: their spacing in sums/sums2 (1 on the first
// launch, times 512 on each later one). npix is the original's parameter, not read. As the original, the
// last CTA's serial remainder reads its elements at stride 1.
extern "C" __global__ void rd_srad1_reduce(long npix, int cnt, int stride, float* sums, float* sums2)
{
    const int bx = blockIdx.x;
    const int tx = threadIdx.x;
    const int el = bx * RD_SRAD1_THREADS + tx;
    // elements of the last CTA (all 512 when cnt fills every CTA)
    const int in_last = RD_SRAD1_THREADS - (gridDim.x * RD_SRAD1_THREADS - cnt);

    __shared__ float s1[RD_SRAD1_THREADS];
    __shared__ float s2[RD_SRAD1_THREADS];

    if (el < cnt) {
        s1[tx] = sums[el * stride];
        s2[tx] = sums2[el * stride];
    }
    __syncthreads();

    if (in_last == RD_SRAD1_THREADS) {
        // every CTA full: a tree over all 512 in every CTA
        rd_srad1_full_tree(s1, s2, tx, bx, stride, sums, sums2);
    } else if (bx != gridDim.x - 1) {
        // a full CTA of a grid whose last CTA is not: the same tree, a branch of its own as in the original
        rd_srad1_full_tree(s1, s2, tx, bx, stride, sums, sums2);
    } else {
        // the last, partly filled CTA: a tree over its first pow2 elements (the largest power of two not
        // above in_last), then the thread holding that tree's sum adds the rest one by one
        int pow2 = 0;
        for (int w = 2; w <= RD_SRAD1_THREADS; w = 2 * w) {
            if (in_last >= w) {
                pow2 = w;
            }
        }
        for (int w = 2; w <= pow2; w = 2 * w) {
            if ((tx + 1) % w == 0 && tx < pow2) {
                s1[tx] = s1[tx] + s1[tx - w / 2];
                s2[tx] = s2[tx] + s2[tx - w / 2];
            }
            __syncthreads();
        }
        if (tx == pow2 - 1) {
            for (int k = bx * RD_SRAD1_THREADS + pow2; k < bx * RD_SRAD1_THREADS + in_last; k++) {
                s1[tx] = s1[tx] + sums[k];
                s2[tx] = s2[tx] + sums2[k];
            }
            sums[bx * stride * RD_SRAD1_THREADS] = s1[tx];
            sums2[bx * stride * RD_SRAD1_THREADS] = s2[tx];
        }
    }
}
