// rfmodel: description = ISPASS-2009 NN (LeNet-style digit recognition), first convolutional layer: one CTA per (feature map, image), 13x13 threads, each a 5x5 window at stride 2 over the 29x29 input (window offsets from a constant table), bias plus 25 multiply-adds, then the scaled tanh activation evaluated through double-precision constants as in the original.
// rfmodel: threads_per_cta = 169
// rfmodel: ctas = 168
// rfmodel: trip = 25
// rfmodel: category = fp-heavy, memory-bound, register-insensitive, cache-sensitive
// rfmodel: suite = papers
// rfmodel: benchmark = ISPASS-2009 NN
// rfmodel: original = ispass2009-benchmarks NN/NN_kernel.cu: executeFirstLayer (13x13 threads, grid (6, NUM); the GPGPU-Sim run's NUM = 28 images: 168 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 32
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 169

// offsets of a 5x5 window's taps in a 29-wide input image
__constant__ int is_nn1_taps[25] = {0,  1,  2,  3,  4,  29, 30, 31, 32, 33, 58, 59, 60,
                                    61, 62, 87, 88, 89, 90, 91, 116, 117, 118, 119, 120};

// in: 29x29 floats per image; weights: 26 per feature map (bias, then the 25 taps); out: 6 maps of 13x13
// per image
extern "C" __global__ void is_nn_layer1(float* in, float* weights, float* out)
{
    const int map = blockIdx.x;
    const int ox = threadIdx.x, oy = threadIdx.y;
    const int w0 = map * 26;
    const int corner = oy * 2 * 29 + ox * 2;   // the window's top-left input pixel
    float acc = 0;
    acc += weights[w0];
    for (int t = 0; t < 25; ++t)
        acc += in[corner + is_nn1_taps[t] + 29 * 29 * blockIdx.y] * weights[w0 + 1 + t];
    // the original's activation: its constants are doubles, so the scaling is done in double precision
    acc = 1.7159 * tanhf(0.66666667 * acc);
    out[13 * 13 * map + oy * 13 + ox + 13 * 13 * 6 * blockIdx.y] = acc;
}
