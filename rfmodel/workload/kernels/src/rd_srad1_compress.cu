// rfmodel: description = Rodinia srad (v1) compress: one thread per pixel in 512-thread CTAs over a 1-D grid; each pixel of the diffused image is compressed in place to 255 times its single-precision log.
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 450
// rfmodel: trip = 1
// rfmodel: category = memory-bound, fp-heavy, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia srad (srad_v1)
// rfmodel: original = Rodinia 3.1 cuda/srad/srad_v1/compress_kernel.cu: compress (512 threads per CTA; ./srad 100 0.5 502 458: 502 x 458 = 229916 pixels, 450 CTAs)
// rfmodel: papers = stt, cerf
// rfmodel: original_regs = 12
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 512

// The CTA size is a compile-time constant, as the original's NUMBER_THREADS.
#define RD_SRAD1_THREADS 512

extern "C" __global__ void rd_srad1_compress(long npix, float* img)
{
    const int px = blockIdx.x * RD_SRAD1_THREADS + threadIdx.x;
    if (px < npix) {
        img[px] = log(img[px]) * 255;
    }
}
