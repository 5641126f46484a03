// rfmodel: description = DNN LSTM cell, one time step for a batch: per hidden unit, the four gate pre-activations from two mat-vec products (input weights times x_t, recurrent weights times h_(t-1), both vectors staged through shared memory in 256-element chunks), then sigmoid/tanh gates and the cell and hidden-state update.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 8
// rfmodel: trip = 2
// rfmodel: category = memory-bound, fp-heavy, cache-insensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = DeepBench rnn_bench (LSTM; DeepBench itself calls cuDNN)
// rfmodel: original = none (written from DeepBench's shapes: rnn_bench inference_server_set LSTM, hidden = input = 512, batch 4, one of its 25 time steps; the closest Tango kernel, Tango/GPU/LSTM/lstm.cu ExecuteLSTM, is double precision with hard sigmoid, one CTA of 100 threads, 68 registers and 800 B shared on sm_80, and is not what this kernel is compared with)
// rfmodel: papers = malekeh, corf
// rfmodel: original_regs = 40
// rfmodel: original_shared = 2048
// rfmodel: original_threads_per_cta = 256

#define LSTM_CHUNK 256

__device__ __forceinline__ float lstm_sigmoid(float v)
{
    return 1.0f / (1.0f + expf(-v));
}

// Weights are input-major with the four gates side by side: w_in[k][g*hidden + j] for input k, gate g in
// (input, forget, cell, output) and hidden unit j (so a warp's loads are consecutive in j); bias[g*hidden + j].
// Thread j of the grid's x dimension is hidden unit j; blockIdx.y is the batch element. Vectors are
// batch-major: x[b][k], h[b][k], c[b][j].
extern "C" __global__ void dnn_lstm_step(int hidden, const float* __restrict__ w_in, const float* __restrict__ w_rec,
                                         const float* __restrict__ bias, const float* __restrict__ x,
                                         const float* __restrict__ h_prev, const float* __restrict__ c_prev,
                                         float* __restrict__ h_next, float* __restrict__ c_next)
{
    __shared__ float x_chunk[LSTM_CHUNK];
    __shared__ float h_chunk[LSTM_CHUNK];
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int b = blockIdx.y;
    const int gate_stride = 4 * hidden;
    const float* xb = x + (size_t)b * hidden;
    const float* hb = h_prev + (size_t)b * hidden;
    float gi = 0.0f, gf = 0.0f, gc = 0.0f, go = 0.0f;
    for (int k0 = 0; k0 < hidden; k0 += LSTM_CHUNK) {
        const int k = k0 + threadIdx.x;
        x_chunk[threadIdx.x] = k < hidden ? xb[k] : 0.0f;
        h_chunk[threadIdx.x] = k < hidden ? hb[k] : 0.0f;
        __syncthreads();
        if (j < hidden) {
            const int steps = min(LSTM_CHUNK, hidden - k0);
            const float* wi = w_in + (size_t)k0 * gate_stride + j;
            const float* wr = w_rec + (size_t)k0 * gate_stride + j;
            for (int kk = 0; kk < steps; kk++) {
                const float xv = x_chunk[kk];
                const float hv = h_chunk[kk];
                gi += wi[0] * xv + wr[0] * hv;
                gf += wi[hidden] * xv + wr[hidden] * hv;
                gc += wi[2 * hidden] * xv + wr[2 * hidden] * hv;
                go += wi[3 * hidden] * xv + wr[3 * hidden] * hv;
                wi += gate_stride;
                wr += gate_stride;
            }
        }
        __syncthreads();
    }
    if (j < hidden) {
        const float in_gate = lstm_sigmoid(gi + bias[j]);
        const float forget_gate = lstm_sigmoid(gf + bias[hidden + j]);
        const float cell_in = tanhf(gc + bias[2 * hidden + j]);
        const float out_gate = lstm_sigmoid(go + bias[3 * hidden + j]);
        const float c = forget_gate * c_prev[(size_t)b * hidden + j] + in_gate * cell_in;
        c_next[(size_t)b * hidden + j] = c;
        h_next[(size_t)b * hidden + j] = out_gate * tanhf(c);
    }
}
