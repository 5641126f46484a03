// rfmodel: description = Rodinia bfs, second kernel: one thread per node; a node marked for the next level joins the frontier, becomes visited, and raises the flag that another level follows.
// rfmodel: threads_per_cta = 512
// rfmodel: ctas = 128
// rfmodel: trip = 1
// rfmodel: category = irregular, integer-heavy, memory-bound, cache-sensitive, register-insensitive
// rfmodel: suite = papers
// rfmodel: benchmark = Rodinia bfs
// rfmodel: original = Rodinia 3.1 cuda/bfs/kernel2.cu: Kernel2 (512 threads per CTA, graph65536.txt: 65536 nodes)
// rfmodel: papers = corf, stt, cerf
// rfmodel: original_regs = 12
// rfmodel: original_shared = 0
// rfmodel: original_threads_per_cta = 512

// CTA size as a compile-time constant, as in the original.
#define RD_BFS_CTA 512

// next_frontier[v] set by the first kernel: v becomes part of the frontier and visited, and *more_levels
// tells the host to run another step.
extern "C" __global__ void rd_bfs_2(bool* frontier, bool* next_frontier, bool* seen, bool* more_levels,
                                    int n_nodes)
{
    const int v = blockIdx.x * RD_BFS_CTA + threadIdx.x;
    if (v < n_nodes && next_frontier[v]) {
        frontier[v] = true;
        seen[v] = true;
        *more_levels = true;
        next_frontier[v] = false;
    }
}
