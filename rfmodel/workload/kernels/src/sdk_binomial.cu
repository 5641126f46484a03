// rfmodel: description = CUDA SDK binomialOptions: one CTA prices one European call on a binomial tree; each of 128 threads holds 16 leaves in registers and walks the tree back one level per step, swapping its neighbour's first node through shared memory between two barriers.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 1024
// rfmodel: trip = 128
// rfmodel: category = register-sensitive, cache-insensitive, fp-heavy, compute-bound
// rfmodel: suite = papers
// rfmodel: benchmark = CUDA SDK binomialOptions
// rfmodel: original = cuda-samples Samples/5_Domain_Specific/binomialOptions/binomialOptions_kernel.cu: binomialOptionsKernel (float, 128 threads, NUM_STEPS 2048, 1024 options)
// rfmodel: papers = cerf
// rfmodel: original_regs = 32
// rfmodel: original_shared = 516
// rfmodel: original_threads_per_cta = 128

// The tree's shape as in the sample: 2048 levels at most, 128 threads with 16 leaves each. The number of
// steps actually taken is a parameter (at most SDK_BIN_MAX_STEPS): the root after `steps` backward steps
// depends on leaves 0 .. steps only, so a shorter tree runs in the same code.
#define SDK_BIN_MAX_STEPS 2048
#define SDK_BIN_MAX_OPTIONS 1024
#define SDK_BIN_THREADS 128
#define SDK_BIN_LEAVES (SDK_BIN_MAX_STEPS / SDK_BIN_THREADS)

// Per option, precomputed on the host: spot, strike, v*sqrt(dt), and the discounted up/down probabilities.
struct SdkBinOption {
    float spot;
    float strike;
    float vdt;
    float up_df;
    float down_df;
};
__constant__ SdkBinOption sdk_bin_options[SDK_BIN_MAX_OPTIONS];

// The call's payoff at leaf `leaf` of a tree with `steps` levels.
__device__ __forceinline__ float sdk_bin_payoff(float spot, float strike, float vdt, int leaf, int steps)
{
    const float gain = spot * __expf(vdt * (2.0f * leaf - steps)) - strike;
    return gain > 0.0f ? gain : 0.0f;
}

extern "C" __global__ void sdk_binomial(float* result, int steps)
{
    __shared__ float edge[SDK_BIN_THREADS + 1];
    const int tid = threadIdx.x;
    const float spot = sdk_bin_options[blockIdx.x].spot;
    const float strike = sdk_bin_options[blockIdx.x].strike;
    const float vdt = sdk_bin_options[blockIdx.x].vdt;
    const float up_df = sdk_bin_options[blockIdx.x].up_df;
    const float down_df = sdk_bin_options[blockIdx.x].down_df;

    // node[0 .. SDK_BIN_LEAVES-1] are this thread's nodes; node[SDK_BIN_LEAVES] is the next thread's first
    float node[SDK_BIN_LEAVES + 1];
#pragma unroll
    for (int j = 0; j < SDK_BIN_LEAVES; ++j)
        node[j] = sdk_bin_payoff(spot, strike, vdt, tid * SDK_BIN_LEAVES + j, steps);
    if (tid == 0)
        edge[SDK_BIN_THREADS] = sdk_bin_payoff(spot, strike, vdt, SDK_BIN_MAX_STEPS, steps);

    // once the level drops below this thread's first node, its nodes no longer matter
    const int last_level = max(0, tid * SDK_BIN_LEAVES - 1);

#pragma unroll 16
    for (int level = steps; level > 0; --level) {
        edge[tid] = node[0];
        __syncthreads();
        node[SDK_BIN_LEAVES] = edge[tid + 1];
        __syncthreads();
        if (level > last_level) {
#pragma unroll
            for (int j = 0; j < SDK_BIN_LEAVES; ++j)
                node[j] = up_df * node[j + 1] + down_df * node[j];
        }
    }
    if (tid == 0)
        result[blockIdx.x] = node[0];
}
