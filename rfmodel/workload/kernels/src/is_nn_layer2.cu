// rfmodel: description = ISPASS-2009 NN (LeNet-style digit recognition), second convolutional layer: one CTA per (feature map, image), 5x5 threads, each a 5x5 window at stride 2 over all six 13x13 maps of the first layer (window offsets from a constant table), bias plus 6x25 multiply-adds, then the scaled tanh activation evaluated through double-precision constants as in the original.
// rfmodel: threads_per_cta = 25
// rfmodel: ctas = 1400
// rfmodel: trip = 25
// rfmodel: category = fp-heavy, memory-bound, register-insensitive, cache-sensitive
// rfmodel: suite = papers
// rfmodel: benchmark = ISPASS-2009 NN
// rfmodel: original = ispass2009-benchmarks NN/NN_kernel.cu: executeSecondLayer (5x5 threads, grid (50, NUM); the GPGPU-Sim run's NUM = 28 images: 1400 CTAs)
// rfmodel: papers = stt
// rfmodel: original_regs = 32
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 25

// offsets of a 5x5 window's taps in a 13-wide map
__constant__ int is_nn2_taps[25] = {0,  1,  2,  3,  4,  13, 14, 15, 16, 17, 26, 27, 28,
                                    29, 30, 39, 40, 41, 42, 43, 52, 53, 54, 55, 56};

// in: 6 maps of 13x13 floats per image; weights: 156 per output map (bias, then per tap the six maps'
// weights; the last 5 unused); out: 50 maps of 5x5 per image
extern "C" __global__ void is_nn_layer2(float* in, float* weights, float* out)
{
    const int map = blockIdx.x;
    const int ox = threadIdx.x, oy = threadIdx.y;
    const int w0 = map * 26 * 6;
    const int corner = ox * 2 + 13 * (oy * 2);
    float acc = 0;
    acc += weights[w0];
    for (int t = 0; t < 25; ++t) {
        const int at = corner + is_nn2_taps[t] + 13 * 13 * 6 * blockIdx.y;
        const int wt = w0 + 1 + t * 6;
        acc += in[at] * weights[wt];
        acc += in[169 + at] * weights[wt + 1];
        acc += in[338 + at] * weights[wt + 2];
        acc += in[507 + at] * weights[wt + 3];
        acc += in[676 + at] * weights[wt + 4];
        acc += in[845 + at] * weights[wt + 5];
    }
    // the original's activation: its constants are doubles, so the scaling is done in double precision
    acc = 1.7159 * tanhf(0.66666667 * acc);
    out[5 * 5 * map + oy * 5 + ox + 1250 * blockIdx.y] = acc;
}
