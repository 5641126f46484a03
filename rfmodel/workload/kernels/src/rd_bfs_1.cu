// rfmodel: description = Rodinia bfs, first kernel: one thread per node; a node on the frontier leaves it and marks each unvisited neighbour (adjacency list in CSR form) for the next level with its level + 1.
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 128
// rfmodel: trip = 6
// rfmodel: category = irregular, integer-heavy, memory-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia bfs
// rfmodel: original = Rodinia 3.1 cuda/bfs/kernel.cu: Kernel (512 threads per CTA, graph65536.txt: 65536 nodes, about 6 edges a node)
// rfmodel: papers = corf, stt, cerf
// rfmodel: original_regs = 22
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 512

// CTA size as a compile-time constant: the node index is computed from it, not from blockDim, as in
// the original.
#define RD_BFS_CTA 512

// A node's slice of the edge array: where its neighbours start and how many there are.
struct RdBfsNode {
    int first;
    int count;
};

// frontier[v]: v is expanded in this step; next_frontier[v]: v joins the next level; seen[v]: v already has
// its level in level[v]. All pointers may alias (no __restrict__), so the node's slice bounds are re-read
// from memory on every step of the edge loop.
extern "C" __global__ void rd_bfs_1(RdBfsNode* nodes, int* edges, bool* frontier, bool* next_frontier,
                                    bool* seen, int* level, int n_nodes)
{
    const int v = blockIdx.x * RD_BFS_CTA + threadIdx.x;
    if (v < n_nodes && frontier[v]) {
        frontier[v] = false;
        for (int e = nodes[v].first; e < nodes[v].first + nodes[v].count; e++) {
            const int w = edges[e];
            if (!seen[w]) {
                level[w] = level[v] + 1;
                next_frontier[w] = true;
            }
        }
    }
}
