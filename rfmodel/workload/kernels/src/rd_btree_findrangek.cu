// rfmodel: description = Rodinia b+tree findRangeK: one CTA per range query, one thread per key slot of a node (order 256); two cursors descend the tree side by side to the leaves of the range's first and last keys, then the matching slots give the first record and the range's length.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 6000
// rfmodel: trip = 2
// rfmodel: category = irregular, integer-heavy, memory-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia b+tree
// rfmodel: original = Rodinia 3.1 cuda/b+tree/kernel/kernel_gpu_cuda_2.cu: findRangeK (order 256, 256 threads per CTA, mil.txt: 1M keys, tree height 2, command j 6000 3000: 6000 CTAs)
// rfmodel: papers = ltrf, corf, malekeh
// rfmodel: original_regs = 32
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

#include "rd_btree.cuh"

// lo_at/lo_next follow the range's first key lo[q], hi_at/hi_next its last key hi[q]; all start at the root.
// first[q] gets the record index of lo[q], count[q] the number of records from there to hi[q]'s.
extern "C" __global__ void rd_btree_findrangek(long levels, RdBtNode* tree, long n_nodes, long* lo_at,
                                               long* lo_next, long* hi_at, long* hi_next, int* lo, int* hi,
                                               int* first, int* count)
{
    const int slot = threadIdx.x;
    const int q = blockIdx.x;
    for (int d = 0; d < levels; d++) {
        rd_bt_descend(tree, n_nodes, lo_at, lo_at, lo_next, lo, q, slot);
        rd_bt_descend(tree, n_nodes, hi_at, hi_at, hi_next, hi, q, slot);
        __syncthreads();
        if (slot == 0) {
            lo_at[q] = lo_next[q];
            hi_at[q] = hi_next[q];
        }
        __syncthreads();
    }
    if (tree[lo_at[q]].key[slot] == lo[q]) {
        first[q] = tree[lo_at[q]].child[slot];
    }
    __syncthreads();
    if (tree[hi_at[q]].key[slot] == hi[q]) {
        count[q] = tree[hi_at[q]].child[slot] - first[q] + 1;
    }
}
