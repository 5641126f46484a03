// rfmodel: description = Rodinia backprop bpnn_adjust_weights_cuda: one thread per input-to-hidden weight in 16 x 16 CTAs; the step eta * delta * input + momentum * previous step is computed in double precision (the constants are doubles), added to the float weight and kept as the next previous step; the first CTA's first row also steps the bias weights.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 4096
// rfmodel: trip = 1
// rfmodel: category = fp-heavy, memory-bound, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia backprop
// rfmodel: original = Rodinia 3.1 cuda/backprop/backprop_cuda_kernel.cu: bpnn_adjust_weights_cuda (16 x 16 threads per CTA, 65536 input units and 16 hidden: a 1 x 4096 grid)
// rfmodel: papers = stt
// rfmodel: original_regs = 27
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

#define RD_BP_ROWS 16

// Learning rate and momentum: double literals, so the update is evaluated in double as in the original.
#define RD_BP_RATE 0.3
#define RD_BP_MOMENTUM 0.3

// w and prev are (n_in + 1) x (n_hid + 1), row-major; delta[1..n_hid] the hidden layer's errors, y[1..n_in]
// the input units.
extern "C" __global__ void rd_backprop_adjust(float* delta, int n_hid, float* y, int n_in, float* w,
                                              float* prev)
{
    const int cy = blockIdx.y;
    const int j = threadIdx.x;
    const int k = threadIdx.y;
    const int at = (n_hid + 1) * RD_BP_ROWS * cy + (n_hid + 1) * k + j + 1 + (n_hid + 1);
    const int yi = RD_BP_ROWS * cy + k + 1;
    const int dj = j + 1;

    w[at] += ((RD_BP_RATE * delta[dj] * y[yi]) + (RD_BP_MOMENTUM * prev[at]));
    prev[at] = ((RD_BP_RATE * delta[dj] * y[yi]) + (RD_BP_MOMENTUM * prev[at]));
    __syncthreads();
    if (k == 0 && cy == 0) {
        w[dj] += ((RD_BP_RATE * delta[dj]) + (RD_BP_MOMENTUM * prev[dj]));
        prev[dj] = ((RD_BP_RATE * delta[dj]) + (RD_BP_MOMENTUM * prev[dj]));
    }
}
