// rfmodel: description = Rodinia b+tree findK: one CTA per query key, one thread per key slot of a node (order 256); each level, the thread whose key interval holds the query moves the CTA's node cursor (kept in global memory) to the child, then the leaf's matching slot copies the record.
// rfmodel: threads_per_cta = 256
// rfmodel: ctas = 10000
// rfmodel: trip = 2
// rfmodel: category = irregular, integer-heavy, memory-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia b+tree
// rfmodel: original = Rodinia 3.1 cuda/b+tree/kernel/kernel_gpu_cuda.cu: findK (order 256, 256 threads per CTA, mil.txt: 1M keys, tree height 2, command k 10000: 10000 CTAs)
// rfmodel: papers = ltrf, corf, malekeh
// rfmodel: original_regs = 28
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 256

#include "rd_btree.cuh"

struct RdBtRecord {
    int value;
};

// cursor[q] and next[q]: the node that query q's CTA is at, and the one it moves to (both start at the root,
// node 0). A child index outside the node array is not followed.
extern "C" __global__ void rd_btree_findk(long levels, RdBtNode* tree, long n_nodes, RdBtRecord* records,
                                          long* cursor, long* next, int* query, RdBtRecord* found)
{
    const int slot = threadIdx.x;
    const int q = blockIdx.x;
    for (int d = 0; d < levels; d++) {
        rd_bt_descend(tree, n_nodes, cursor, next, next, query, q, slot);
        __syncthreads();
        if (slot == 0) {
            cursor[q] = next[q];
        }
        __syncthreads();
    }
    if (tree[cursor[q]].key[slot] == query[q]) {
        found[q].value = records[tree[cursor[q]].child[slot]].value;
    }
}
