// rfmodel: description = DNN convolution lowering, im2col: unfolds one C x H x W image into the (C*R*S) x (OH*OW) column matrix a GEMM-based convolution multiplies, one thread per (channel, output pixel) in a grid-stride loop, R x S taps each (zero where the window leaves the padded image).
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 1568
// rfmodel: trip = 1
// rfmodel: category = memory-bound, integer-heavy, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = DeepBench conv_bench (the im2col lowering of a GEMM-based convolution; DeepBench itself calls cuDNN)
// rfmodel: original = none (written from DeepBench's shapes: conv_bench training set W = H = 56, C = 128, K = 256, 3x3, pad 1, stride 1, one image of the batch; Tango's convolutions are direct, with no im2col kernel)
// rfmodel: papers = malekeh, corf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

// cols[(c*R + r)*S + s][oh*OW + ow] = image[c][oh*stride - pad + r][ow*stride - pad + s], or 0 outside the
// image. Each work item is one (c, oh, ow); the grid strides over all C*OH*OW of them.
extern "C" __global__ void dnn_im2col(int channels, int height, int width, int ksize_r, int ksize_s, int pad,
                                      int stride, int out_h, int out_w, const float* __restrict__ image,
                                      float* __restrict__ cols)
{
    const int items = channels * out_h * out_w;
    const int plane = out_h * out_w;
    for (int item = blockIdx.x * blockDim.x + threadIdx.x; item < items; item += blockDim.x * gridDim.x) {
        const int ow = item % out_w;
        const int oh = (item / out_w) % out_h;
        const int c = item / plane;
        const int y0 = oh * stride - pad;
        const int x0 = ow * stride - pad;
        const float* src = image + (size_t)c * height * width;
        float* dst = cols + (size_t)c * ksize_r * ksize_s * plane + oh * out_w + ow;
        for (int r = 0; r < ksize_r; r++) {
            const int y = y0 + r;
            for (int s = 0; s < ksize_s; s++) {
                const int x = x0 + s;
                const bool inside = y >= 0 && y < height && x >= 0 && x < width;
                *dst = inside ? src[y * width + x] : 0.0f;
                dst += plane;
            }
        }
    }
}
