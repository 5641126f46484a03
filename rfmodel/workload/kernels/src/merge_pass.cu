// rfmodel: description = One pass of a bottom-up merge sort over 32-bit keys without shared memory: every thread merges its own pair of sorted runs from global memory, one key per step, with data-dependent cursors (a warp's lanes walk 64 different lines, each re-read over the steps that stay in it) and writes the merged run.
// rfmodel: threads_per_cta = 128
// rfmodel: ctas = 30
// rfmodel: trip = 160
// rfmodel: category = memory-bound, irregular, integer-heavy, cache-sensitive, register-insensitive

// Thread t merges in[t*2*run, t*2*run + run) and in[t*2*run + run, t*2*run + 2*run) (both sorted,
// cut at n) into out at the same place. Keys equal in both runs are taken from the first (stable).
extern "C" __global__ void __launch_bounds__(128)
merge_pass(int n, int run, const int* __restrict__ in, int* __restrict__ out)
{
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    const long base = t * 2 * run;
    if (base >= n)
        return;
    long i = base;
    const long iend = min(base + run, (long)n);
    long j = iend;
    const long jend = min(base + 2 * (long)run, (long)n);
    long o = base;
    while (i < iend && j < jend) {
        const int a = in[i];
        const int b = in[j];
        if (b < a) {
            out[o] = b;
            ++j;
        } else {
            out[o] = a;
            ++i;
        }
        ++o;
    }
    while (i < iend)
        out[o++] = in[i++];
    while (j < jend)
        out[o++] = in[j++];
}
